// `import TabBarTesting` is all a front end's test writes: the client (`TabBar`, `TabBarEvent`,
// `ClientError`) and the model (`JSON`, `BarState`…) come with it.
@_exported import TabBarClient

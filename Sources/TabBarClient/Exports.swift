// `import TabBarClient` is all a front end writes: the model's types (`JSON`, `BarState`,
// `Item`, `Badge`, `Source`, `TabRef`, `TouchPhase`, `Topics`…) come with it.
@_exported import TabBarCore

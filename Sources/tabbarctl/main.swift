import Glibc
import TabBarClient

// tabbarctl: parse the command line, run one command, exit with its status.
let output = Output.standard
let status: Int32
do {
    let invocation = try Arguments.parse(Array(CommandLine.arguments.dropFirst()))
    if case .monitor = invocation.command { Monitor.installSignalHandlers() }
    TabBar.startAdvice = Wording.startAdvice(options: invocation.options)
    status = await Runner(options: invocation.options, output: output).run(invocation.command)
} catch {
    output.error(error.description)
    status = ExitStatus.client
}
exit(status)

@preconcurrency import Glibc
import TabBarServer

// Signals are handled by the event loop through a signalfd: block them before any thread starts.
var blocked = sigset_t()
sigemptyset(&blocked)
for s in [SIGTERM, SIGINT, SIGHUP, SIGPIPE] { sigaddset(&blocked, s) }
pthread_sigmask(SIG_BLOCK, &blocked, nil)

exit(DaemonCommand.main(Array(CommandLine.arguments.dropFirst())))

# fish completion for tabbarctl: subcommands, their options, and — asked of the
# running daemon with a short timeout — item ids and sound names.

set -l commands state select badge action play sounds monitor call touch push pop scroll hide show configure reset feedback stats ping pipe advance wait help

function __tabbarctl_ask --description 'string values of KEY in the daemon JSON answer'
    set -l key $argv[1]
    set -e argv[1]
    set -l words (commandline -opc)
    set -l where
    for i in (seq 2 (count $words))
        switch $words[$i]
            case --socket --instance
                set -a where $words[$i] $words[(math $i + 1)]
            case '--socket=*' '--instance=*'
                set -a where $words[$i]
        end
    end
    $words[1] $where --timeout 300 --json $argv 2>/dev/null | string match -ra "\"$key\":\"[^\"]*\"" | string replace -r "^\"$key\":\"(.*)\"\$" '$1'
end

function __tabbarctl_instances
    set -l dir /run/tabbard
    set -q XDG_RUNTIME_DIR; and set dir $XDG_RUNTIME_DIR/tabbard
    for f in $dir/*.socket
        basename $f .socket
    end
end

complete -c tabbarctl -f
complete -c tabbarctl -l socket -r -F -d 'the daemon socket'
complete -c tabbarctl -l instance -x -a '(__tabbarctl_instances)' -d 'the daemon of one application'
complete -c tabbarctl -l json -d 'print raw JSON'
complete -c tabbarctl -l timeout -x -d 'reply timeout in ms'
complete -c tabbarctl -s h -l help -d 'show help'
complete -c tabbarctl -s V -l version -d 'show the version'

complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a state -d 'print the bar'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a select -d 'select a tab'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a badge -d 'set or clear a badge'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a action -d 'trigger an action or center item'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a play -d 'play a sound'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a sounds -d 'list the loaded sounds'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a monitor -d 'follow the events'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a call -d 'send any request'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a touch -d 'send a touch'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a push -d 'push a screen'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a pop -d 'pop a screen'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a scroll -d 'report a scroll'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a hide -d 'hide the bar'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a show -d 'show the bar'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a configure -d 'replace the bar'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a reset -d 'go back to the configured bar'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a feedback -d 'show or set sound feedback'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a stats -d 'print counters'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a ping -d 'check the daemon answers'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a pipe -d 'bridge stdin/stdout to the daemon'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a advance -d 'move the manual clock'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a wait -d 'wait for an event'
complete -c tabbarctl -n "not __fish_seen_subcommand_from $commands" -a help -d 'show help'

complete -c tabbarctl -n '__fish_seen_subcommand_from select badge action' -a '(__tabbarctl_ask id state)' -d item
complete -c tabbarctl -n '__fish_seen_subcommand_from play' -a '(__tabbarctl_ask name sounds)' -d sound
complete -c tabbarctl -n '__fish_seen_subcommand_from help' -a "$commands"
complete -c tabbarctl -n '__fish_seen_subcommand_from configure' -F
complete -c tabbarctl -n '__fish_seen_subcommand_from select' -l program -d 'a program selection, no click'
complete -c tabbarctl -n '__fish_seen_subcommand_from select' -l if-seq -x -d 'only at this seq'
complete -c tabbarctl -n '__fish_seen_subcommand_from badge' -l dot -d 'a dot'
complete -c tabbarctl -n '__fish_seen_subcommand_from badge' -l text -x -d 'a text'
complete -c tabbarctl -n '__fish_seen_subcommand_from badge' -l clear -d 'no badge'
complete -c tabbarctl -n '__fish_seen_subcommand_from action' -l finish -d 'the action is done'
complete -c tabbarctl -n '__fish_seen_subcommand_from monitor' -l topics -x -a 'tab action badge bar animation feedback sound server state' -d 'only these topics'
complete -c tabbarctl -n '__fish_seen_subcommand_from monitor' -l follow -d 'reconnect after a restart'
complete -c tabbarctl -n '__fish_seen_subcommand_from touch' -a 'down up cancel'
complete -c tabbarctl -n '__fish_seen_subcommand_from touch' -l id -x -d 'touch sequence id'
complete -c tabbarctl -n '__fish_seen_subcommand_from push' -l hides-bar -d 'the screen hides the bar'
complete -c tabbarctl -n '__fish_seen_subcommand_from hide show' -l reason -x -a 'explicit push scroll' -d why
complete -c tabbarctl -n '__fish_seen_subcommand_from hide show' -l animated -d animate
complete -c tabbarctl -n '__fish_seen_subcommand_from feedback' -l profile -x -a 'full quiet silent' -d profile
complete -c tabbarctl -n '__fish_seen_subcommand_from feedback' -l volume -x -d '0 to 1'
complete -c tabbarctl -n '__fish_seen_subcommand_from pipe' -l token-file -r -F -d 'token file'
complete -c tabbarctl -n '__fish_seen_subcommand_from wait' -l match -x -d 'params to match, K=V'

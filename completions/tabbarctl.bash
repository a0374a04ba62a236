# bash completion for tabbarctl                                  -*- shell-script -*-
# Subcommands, their options, and — asked of the running daemon with a short
# timeout — item ids (select, badge, action) and sound names (play).

_tabbarctl_commands="state select badge action play sounds monitor call touch push pop scroll hide show configure reset feedback stats ping pipe advance wait help"
_tabbarctl_globals="--socket --instance --json --timeout --help --version"
_tabbarctl_topics="tab action badge bar animation feedback sound server state tab.selected tab.reselected tab.highlighted action.triggered action.finished badge.changed bar.configured bar.visibility animation.cue animation.began animation.ended feedback.changed sound.played sound.failed server.stopping state.resync"

# _tabbarctl_ask KEY ARGS...: the string values of "KEY" in the daemon's JSON answer to ARGS
# (for example: id state). Empty, quickly, when no daemon answers.
_tabbarctl_ask() {
    local key="$1"; shift
    local -a where=()
    local i w
    # Reach the daemon the command line names.
    for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
        w="${COMP_WORDS[i]}"
        case "$w" in
            --socket|--instance) where+=("$w" "${COMP_WORDS[i+1]}") ;;
            --socket=*|--instance=*) where+=("$w") ;;
        esac
    done
    "${COMP_WORDS[0]}" "${where[@]}" --timeout 300 --json "$@" 2>/dev/null \
        | grep -o "\"$key\":\"[^\"]*\"" | sed "s/^\"$key\":\"//; s/\"\$//"
}

_tabbarctl() {
    local cur prev cmd="" i w nopts=0
    COMPREPLY=()
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"

    # The command is the first word that is not an option or an option's value.
    for ((i = 1; i < COMP_CWORD; i++)); do
        w="${COMP_WORDS[i]}"
        case "$w" in
            --socket|--instance|--timeout|--topics|--text|--if-seq|--id|--reason|--profile|--volume|--token-file|--match) ((i++)) ;;
            -*) ;;
            *) if [ -z "$cmd" ]; then cmd="$w"; else ((nopts++)); fi ;;
        esac
    done

    case "$prev" in
        --socket|--token-file) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --instance)
            local dir="${XDG_RUNTIME_DIR:-/run}/tabbard" names=() f
            for f in "$dir"/*.socket; do [ -S "$f" ] && names+=("$(basename "$f" .socket)"); done
            COMPREPLY=($(compgen -W "${names[*]}" -- "$cur")); return ;;
        --timeout|--if-seq|--id|--volume|--text|--match) return ;;
        --topics)
            local done_part="" last="$cur"
            if [[ "$cur" == *,* ]]; then done_part="${cur%,*},"; last="${cur##*,}"; fi
            COMPREPLY=($(compgen -P "$done_part" -W "$_tabbarctl_topics" -- "$last"))
            compopt -o nospace 2>/dev/null
            return ;;
        --reason) COMPREPLY=($(compgen -W "explicit push scroll" -- "$cur")); return ;;
        --profile) COMPREPLY=($(compgen -W "full quiet silent" -- "$cur")); return ;;
    esac

    if [ -z "$cmd" ]; then
        if [[ "$cur" == -* ]]; then
            COMPREPLY=($(compgen -W "$_tabbarctl_globals" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$_tabbarctl_commands" -- "$cur"))
        fi
        return
    fi

    local opts=""
    case "$cmd" in
        select) opts="--program --if-seq" ;;
        badge) opts="--dot --text --clear" ;;
        action) opts="--finish" ;;
        monitor) opts="--topics --follow" ;;
        touch) opts="--id" ;;
        push) opts="--hides-bar" ;;
        hide|show) opts="--reason --animated" ;;
        feedback) opts="--profile --volume" ;;
        pipe) opts="--token-file" ;;
        wait) opts="--match --timeout" ;;
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts --json --socket --instance --timeout --help" -- "$cur"))
        return
    fi
    case "$cmd" in
        select|badge|action)
            [ "$nopts" -eq 0 ] && COMPREPLY=($(compgen -W "$(_tabbarctl_ask id state)" -- "$cur")) ;;
        play)
            [ "$nopts" -eq 0 ] && COMPREPLY=($(compgen -W "$(_tabbarctl_ask name sounds)" -- "$cur")) ;;
        touch)
            [ "$nopts" -eq 0 ] && COMPREPLY=($(compgen -W "down up cancel" -- "$cur")) ;;
        configure)
            [ "$nopts" -eq 0 ] && COMPREPLY=($(compgen -f -- "$cur")) ;;
        help)
            [ "$nopts" -eq 0 ] && COMPREPLY=($(compgen -W "$_tabbarctl_commands" -- "$cur")) ;;
        wait)
            [ "$nopts" -eq 0 ] && COMPREPLY=($(compgen -W "$_tabbarctl_topics" -- "$cur")) ;;
    esac
}
complete -F _tabbarctl tabbarctl

# The stage runner of scripts/test, sourced by it: each stage runs in a subshell that stops at
# its first failure, whatever an earlier stage did; `summary` prints a table of each stage's
# result and time. `$wanted` holds the stages asked for; `$failed` is 1 once any failed.

results=()
failed=0
# Runs `$@` as the stage `$1`, in a subshell that stops at its first failure; records its
# result and time and goes on.
stage() {
    local name=$1
    shift
    local started=$SECONDS status
    printf '\n==== %s\n' "$name" >&2
    ( set -euo pipefail; "$@" )
    case $? in
        0) status=ok ;;
        *) status=FAILED; failed=1 ;;
    esac
    results+=("$(printf '%-14s %-7s %6ss' "$name" "$status" $((SECONDS - started)))")
}

# Starts `$@` as the stage `$1` in the background, its output kept aside (in $STAGE_LOGS, or
# target/stages): a stage that waits on the network beside one that keeps the CPU busy.
# `joined NAME` waits for it, prints its output, and records it as `stage` would.
declare -gA background_pids background_starts
background() {
    local name=$1 logs=${STAGE_LOGS:-target/stages}
    shift
    mkdir -p "$logs"
    ( set -euo pipefail; "$@" ) > "$logs/$name.log" 2>&1 &
    background_pids[$name]=$!
    background_starts[$name]=$SECONDS
}

joined() {
    local name=$1 logs=${STAGE_LOGS:-target/stages} status
    printf '\n==== %s (in the background)\n' "$name" >&2
    wait "${background_pids[$name]:?no background stage $name}"
    case $? in
        0) status=ok ;;
        *) status=FAILED; failed=1 ;;
    esac
    cat "$logs/$name.log" >&2
    results+=("$(printf '%-14s %-7s %6ss' "$name" "$status" $((SECONDS - background_starts[$name])))")
}

# Stops the background stages still running (the script is ending early).
stop_background() {
    local pid
    for pid in "${background_pids[@]}"; do kill -- "$pid" 2>/dev/null || true; done
}

wants() {
    local stage
    for stage in "${wanted[@]}"; do [ "$stage" = "$1" ] && return 0; done
    return 1
}

summary() {
    printf '\n%-14s %-7s %7s\n' stage result time
    printf '%s\n' "${results[@]}"
    [ "$failed" = 0 ] && echo "all stages passed" || echo "some stages FAILED"
}


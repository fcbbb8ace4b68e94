#!/usr/bin/env bash
# Regenerates fuzz/seeds/<target>/ from the golden vectors in
# proto-codec/tests/vectors/jute-vectors.txt.
#
# - frame:   every `Frame.*` vector as it is, plus two streams of several frames each.
# - reply:   every reply record, behind the selector byte `zkrs_codec::fuzzing::reply` expects.
# - request: every request record, behind the selector byte `zkrs_codec::fuzzing::request`
#            expects.
#
# The selector bytes are the positions in `REPLY_KINDS` / `REQUEST_KINDS` of
# proto-codec/src/fuzzing.rs; keep the tables below in step with them.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
vectors="$here/../proto-codec/tests/vectors/jute-vectors.txt"
seeds="$here/seeds"

# Vector name (without its `.variant` suffix) -> selector byte, for `reply`.
reply_selector() {
    case "$1" in
        ConnectResponse) echo 0 ;;
        ReplyHeader) echo 1 ;;
        WatcherEvent) echo 2 ;;
        CreateResponse) echo 3 ;;
        Create2Response) echo 4 ;;
        ExistsResponse | SetDataResponse | SetACLResponse | Stat) echo 5 ;;
        GetDataResponse) echo 6 ;;
        GetChildrenResponse) echo 7 ;;
        GetChildren2Response) echo 8 ;;
        GetACLResponse) echo 9 ;;
        GetAllChildrenNumberResponse) echo 10 ;;
        GetEphemeralsResponse) echo 11 ;;
        WhoAmIResponse) echo 12 ;;
        MultiResponse) echo 13 ;;
        ErrorResponse) echo 14 ;;
        SyncResponse) echo 15 ;;
        *) echo "" ;;
    esac
}

# Vector name (without its `.variant` suffix) -> selector byte, for `request`.
request_selector() {
    case "$1" in
        ConnectRequest) echo 0 ;;
        CreateRequest) echo 1 ;;
        CreateTTLRequest) echo 2 ;;
        DeleteRequest) echo 3 ;;
        ExistsRequest) echo 4 ;;
        GetDataRequest) echo 5 ;;
        SetDataRequest) echo 6 ;;
        GetChildrenRequest) echo 7 ;;
        GetChildren2Request) echo 8 ;;
        GetACLRequest) echo 9 ;;
        SetACLRequest) echo 10 ;;
        SyncRequest) echo 11 ;;
        CheckVersionRequest) echo 12 ;;
        MultiOperationRecord) echo 13 ;;
        AuthPacket) echo 14 ;;
        ReconfigRequest) echo 15 ;;
        SetWatches) echo 16 ;;
        SetWatches2) echo 17 ;;
        AddWatchRequest) echo 18 ;;
        RemoveWatchesRequest) echo 19 ;;
        CheckWatchesRequest) echo 20 ;;
        RequestHeader) echo 21 ;;
        GetAllChildrenNumberRequest) echo 22 ;;
        GetEphemeralsRequest) echo 23 ;;
        MultiHeader) echo 24 ;;
        *) echo "" ;;
    esac
}

# Writes the bytes of a hex string to stdout.
unhex() {
    local hex="$1" i
    for ((i = 0; i < ${#hex}; i += 2)); do
        printf "\\x${hex:i:2}"
    done
}

rm -rf "$seeds/frame" "$seeds/reply" "$seeds/request"
mkdir -p "$seeds/frame" "$seeds/reply" "$seeds/request"

reply_stream="" request_stream=""
while read -r name hex; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    if [[ "$name" == Frame.* ]]; then
        unhex "$hex" >"$seeds/frame/${name#Frame.}"
        case "$name" in
            Frame.Request.*) request_stream+="$hex" ;;
            *) reply_stream+="$hex" ;;
        esac
        continue
    fi
    base="${name%%.*}"
    sel="$(reply_selector "$base")"
    if [[ -n "$sel" ]]; then
        { printf "\\x$(printf %02x "$sel")"; unhex "$hex"; } >"$seeds/reply/$name"
    fi
    sel="$(request_selector "$base")"
    if [[ -n "$sel" ]]; then
        { printf "\\x$(printf %02x "$sel")"; unhex "$hex"; } >"$seeds/request/$name"
    fi
done <"$vectors"
unhex "$reply_stream" >"$seeds/frame/Stream.replies"
unhex "$request_stream" >"$seeds/frame/Stream.requests"

for target in frame reply request; do
    echo "$target: $(ls "$seeds/$target" | wc -l) seeds"
done

#!/bin/sh
echo "args: $*"
echo "count: $#"
echo "cwd: $(pwd)"
echo "greeting: ${GREETING:-unset}"
if [ -n "$READ_STDIN" ]; then echo "stdin: $(cat)"; fi
echo "to stderr" >&2

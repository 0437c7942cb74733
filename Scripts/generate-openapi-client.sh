#!/usr/bin/env bash
# Regenerates the committed client in Tests/CourierOpenAPITests/NotesAPI from its openapi.yaml and openapi-generator-config.yaml,
# with swift-openapi-generator 1.14.3 built once in a scratch folder outside the repository. CI never runs this:
# the generated Swift is committed, so no build compiles the generator (about 7 minutes on 2 cores).
#   bash Scripts/generate-openapi-client.sh     (SCRATCH=/somewhere to build elsewhere; /tmp/gen by default)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi
scratch="${SCRATCH:-/tmp/gen}"
generator="$scratch/src/.build/release/swift-openapi-generator"
if [ ! -x "$generator" ]; then
    git clone --quiet https://github.com/apple/swift-openapi-generator "$scratch/src"
    git -C "$scratch/src" checkout --quiet 1.14.3
    (cd "$scratch/src" && swift build -c release --product swift-openapi-generator)
fi
"$generator" generate \
    --config Tests/CourierOpenAPITests/NotesAPI/openapi-generator-config.yaml \
    --output-directory Tests/CourierOpenAPITests/NotesAPI \
    Tests/CourierOpenAPITests/NotesAPI/openapi.yaml

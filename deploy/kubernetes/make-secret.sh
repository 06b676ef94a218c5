#!/usr/bin/env bash
# Prints the logbook-keys Secret with a new CURVE keypair (from `logbook keys generate`)
# and a new stack key, for an overlay's secret.yaml:
#   deploy/kubernetes/make-secret.sh > deploy/kubernetes/overlays/mine/secret.yaml
# Keep that file out of version control (or seal it): it holds the secret key.
set -euo pipefail
logbook="${LOGBOOK:-logbook}"
keys="$("$logbook" keys generate --json)"
python3 - "$keys" <<'PY'
import json, secrets, sys
keys = json.loads(sys.argv[1])
stack = secrets.token_hex(32)
print(f"""apiVersion: v1
kind: Secret
metadata:
  name: logbook-keys
  labels:
    app.kubernetes.io/part-of: logbook
type: Opaque
stringData:
  LOGBOOK_CURVE_PUBLIC_KEY: {json.dumps(keys["publicKey"])}
  LOGBOOK_CURVE_SECRET_KEY: {json.dumps(keys["secretKey"])}
  LOGBOOK_CURVE_ALLOW: {json.dumps(keys["publicKey"])}
  LOGBOOK_STACK_KEY: {json.dumps(stack)}""")
PY

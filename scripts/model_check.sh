#!/usr/bin/env bash
# Model-checks the replication protocol (model/replication.pml, docs/REPLICATION.md §9) with spin:
# the model must pass an exhaustive search, and every mutant (one guard removed) must be caught.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
command -v spin >/dev/null || { log "spin is missing: run scripts/setup.sh (Debian package spin)"; exit 1; }

MODEL="$REPO_ROOT/model/replication.pml"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# name | spin -D flags | expect: pass (errors: 0, whole state space); caught (a mutant: a property's
# assertion fails); found (a witness: the scenario a property is about occurs, so it is not vacuous)
RUNS=(
  "failover|                                          |pass"
  "shared-writers|-DSHARED                            |pass"
  "failover, head PUT without If-Match (hint)|-DMUTANT_UNCONDITIONAL_HEAD_PUT|pass"
  "failover with the lease|-DLEASE                         |pass"
  "lease taken without If-Match (seal fences)|-DLEASE -DMUTANT_LEASE_NO_IF_MATCH|pass"
  "witness: takeover, old leader fenced|-DWITNESS_TAKEOVER      |found"
  "witness: all acked despite 2 faults|-DWITNESS_FAULTS          |found"
  "witness: lease taken, paused leader sealed|-DLEASE -DWITNESS_LEASE|found"
  "witness: shared conflict after faults|-DSHARED -DWITNESS_CONFLICT|found"
  "epoch PUT overwrites|-DMUTANT_UNCONDITIONAL_EPOCH_PUT   |caught"
  "recovery skips the seal|-DMUTANT_NO_SEAL                |caught"
  "lease takeover without the seal|-DLEASE -DMUTANT_LEASE_NO_SEAL|caught"
  "ack before the PUT|-DMUTANT_ACK_BEFORE_PUT              |caught"
  "lost response taken as success|-DMUTANT_TRUST_UNKNOWN   |caught"
  "412 on own epoch acks whole batch|-DMUTANT_ACK_WHOLE_BATCH|caught"
  "follower jumps to the head's chain|-DMUTANT_FOLLOWER_JUMPS|caught"
  "shared: head PUT without If-Match|-DSHARED -DMUTANT_UNCONDITIONAL_HEAD_PUT|caught"
  "shared: published only if head is ours|-DSHARED -DMUTANT_PUBLISHED_MEANS_HEAD|caught"
)

# One run: compile the model with its flags, search, and leave the verdict in $dir/row.
run_one() {
  local name="$1" flags="$2" expect="$3" dir="$4" start=$SECONDS opt=-O2 errors states verdict="ok"
  [ "$expect" = pass ] || opt=-O0   # a mutant's search is short: save the compile time
  # shellcheck disable=SC2086  # flags are words
  (cd "$dir" && spin -a $flags "$MODEL" >spin.out 2>&1 && gcc $opt -DSAFETY -o pan pan.c >gcc.out 2>&1 \
    && ./pan -m100000 >pan.out 2>&1) || true
  errors="$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$dir/pan.out" 2>/dev/null | head -1)"
  states="$(sed -n 's/^ *\([0-9]*\) states, stored.*/\1/p' "$dir/pan.out" 2>/dev/null | head -1)"
  if [ -z "$errors" ]; then
    verdict="FAILED: no result"; cat "$dir"/*.out >"$dir/detail"
  elif [ "$expect" = pass ] && { [ "$errors" != 0 ] || grep -q 'max search depth too small' "$dir/pan.out"; }; then
    verdict="FAILED: the model must pass an exhaustive search"; cp "$dir/pan.out" "$dir/detail"
  elif [ "$expect" != pass ] && { [ "$errors" = 0 ] || ! grep -q 'assertion violated' "$dir/pan.out" \
       || grep -q 'invalid array index' "$dir/pan.out"; }; then
    verdict="FAILED: no assertion failed ($expect expected)"
  fi
  printf '%-42s %-8s %-7s %12s %8s  %s\n' "$name" "$expect" "${errors:--}" "${states:--}" \
    "$((SECONDS - start))" "$verdict" >"$dir/row"
  grep -E 'errors:|states, stored|pan:1: ' "$dir/pan.out" 2>/dev/null | sed 's/^/    /' >>"$dir/row" || true
}

# Two at a time (the machine has 2 cores); the long exhaustive runs first.
i=0
for run in "${RUNS[@]}"; do
  IFS='|' read -r name flags expect <<<"$run"
  mkdir -p "$WORK/$i"
  while (($(jobs -rp | wc -l) >= 2)); do wait -n || true; done
  run_one "$name" "$(echo $flags)" "$expect" "$WORK/$i" &
  i=$((i + 1))
done
wait

failed=0
printf '%-42s %-8s %-7s %12s %8s  %s\n' "run" "expect" "errors" "states" "seconds" "verdict" >&2
for ((j = 0; j < i; j++)); do
  cat "$WORK/$j/row" >&2
  [ -f "$WORK/$j/detail" ] && cat "$WORK/$j/detail" >&2
  grep -q '  ok$' <(head -1 "$WORK/$j/row") || failed=$((failed + 1))
done
if ((failed)); then
  log "model check FAILED: $failed of ${#RUNS[@]} runs"
  exit 1
fi
log "model check: the model passes, every mutant is caught and every witness found (${#RUNS[@]} runs)"

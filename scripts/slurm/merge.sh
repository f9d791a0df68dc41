#!/bin/bash
#SBATCH --job-name=gpdp-merge
#SBATCH --output=%x-%j.out
#SBATCH --error=%x-%j.err
#SBATCH --time=00:30:00
#SBATCH --cpus-per-task=1
#SBATCH --mem=4G
#
# Merge the N shards of one sweep (written by mia-sweep / excursion-1d / excursion-2d .sbatch) into
# the folder the unsharded run would have written:
#
#   sbatch --dependency=afterok:$ARRAY_JOB_ID --export=ALL,SHARDS=$SHARDS,MERGED=$OUT scripts/slurm/merge.sh
#   scripts/slurm/merge.sh SHARDS MERGED          # or directly, without Slurm
#
# N and the study come from $SHARDS/manifest; every shard 0..N-1 must be complete (else: the list
# of tasks to resubmit). MERGED must not exist unless MERGE_FORCE=1 (then it is replaced).
# MERGED defaults to SHARDS without its "-shards" suffix. GPDP as in the .sbatch scripts.
set -euo pipefail
die() { echo "gpdp-slurm merge: error: $*" >&2; exit 2; }
SHARDS=${1:-${SHARDS:-}}
[[ -n $SHARDS ]] || die "usage: merge.sh SHARDS [MERGED] (or SHARDS=… MERGED=… sbatch merge.sh)"
SHARDS=${SHARDS%/}
if [[ $SHARDS == *-shards ]]; then default_merged=${SHARDS%-shards}; else default_merged=$SHARDS-merged; fi
MERGED=${2:-${MERGED:-$default_merged}}
MERGED=${MERGED%/}
SUBMIT=${SLURM_SUBMIT_DIR:-$PWD}
GPDP=${GPDP:-$(command -v gpdp || echo "$SUBMIT/target/release/gpdp")}
[[ -x $GPDP ]] || die "no gpdp binary at '$GPDP' (set GPDP=/path/to/gpdp)"
manifest=$SHARDS/manifest
[[ -f $manifest ]] || die "no $manifest: no shard task of this sweep has started"
study=$(sed -n 's/^study=//p' "$manifest")
N=$(sed -n 's/^shards=//p' "$manifest")
[[ $N =~ ^[1-9][0-9]*$ ]] || die "bad shard count '$N' in $manifest"
key=$(sha256sum < "$manifest" | cut -c1-64)
dirs=() missing=() binaries=()
for ((i = 0; i < N; i++)); do
  marker=$SHARDS/.done/$i
  if [[ -d $SHARDS/shard-$i && -f $marker ]] && grep -qx "manifest=$key" "$marker"; then
    dirs+=("$SHARDS/shard-$i")
    binaries+=("$(sed -n 's/^binary=//p' "$marker")")
  else
    missing+=("$i")
  fi
done
if ((${#missing[@]})); then
  list=$(IFS=,; echo "${missing[*]}")
  die "$study: ${#missing[@]} of $N shards incomplete in $SHARDS: $list
  resubmit them with the same environment: sbatch --array=$list scripts/slurm/$study.sbatch"
fi
if (($(printf '%s\n' "${binaries[@]}" | sort -u | wc -l) > 1)); then
  echo "gpdp-slurm merge: warning: the shards were made by different gpdp binaries (same version)" >&2
fi
if [[ -e $MERGED ]]; then
  [[ ${MERGE_FORCE:-0} == 1 ]] || die "$MERGED exists (MERGE_FORCE=1 replaces it)"
fi
mkdir -p "$(dirname "$MERGED")"
tmp=$(mktemp -d "$MERGED.partial.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
rmdir "$tmp"   # gpdp merge creates its --out itself
start=$(date +%s)
echo "gpdp-slurm merge: $study, $N shards -> $MERGED"
"$GPDP" merge --out "$tmp" "${dirs[@]}"
rm -rf "$MERGED"
mv "$tmp" "$MERGED"
echo "gpdp-slurm merge: wrote $MERGED in $(($(date +%s) - start)) s"

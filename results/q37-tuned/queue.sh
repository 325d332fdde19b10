#!/usr/bin/env bash
# Issue 37's tuned comparison (docs/quality.md section 6), one item per split, two at a time on one thread each;
# each item's records land in results/q37-tuned/<item> and are committed as they finish, so that a later session
# resumes where this one stopped (compare reuses every finished run's record and Optuna's tuning.db keeps the
# trials of a search cut off half-way). Run from the repository root: bash results/q37-tuned/queue.sh [ITEM...]
# (default: every item). The held-out splits are recreated from ../shared/data with their fixed seed.
# The item mq2008-5folds, run after the five folds, tests them together: their runs/ are copied into one directory
# under /tmp and compare reuses every record (it trains nothing), writing its tables to results/q37-tuned/mq2008-5folds.
set -euo pipefail
python scripts/hold_out_validation.py ../shared/data/MSLR-WEB10K-5k /tmp/q37/mslr5k-vali >/dev/null 2>&1 \
    || test -d /tmp/q37/mslr5k-vali
python scripts/hold_out_validation.py ../shared/data/lightgbm_lambdarank /tmp/q37/lgbex-vali --fraction 0.25 \
    >/dev/null 2>&1 || test -d /tmp/q37/lgbex-vali
items=("$@")
[ ${#items[@]} -gt 0 ] || items=(mq2008-Fold1 mq2008-Fold2 mq2008-Fold3 mq2008-Fold4 mq2008-Fold5 mslr5k-vali lgbex-vali)
one() {
    local item=$1 data folds=()
    case $item in
        mq2008-5folds)
            local merged=/tmp/q37/mq2008-5folds
            rm -rf "$merged" && mkdir -p "$merged/runs" "results/q37-tuned/$item"
            for fold in 1 2 3 4 5; do cp -r "results/q37-tuned/mq2008-Fold$fold/runs/." "$merged/runs/"; done
            plboost compare ../shared/data/MQ2008 --g-max 2 --config docs/examples/tuned_comparison.toml --tune 30 \
                --repeats 3 --quiet --out "$merged" > "results/q37-tuned/$item.log" 2>&1 || { echo "$item FAILED"; return; }
            cp "$merged"/{results.csv,summary.csv,results.json,significance.csv,per_query.csv} "results/q37-tuned/$item/"
            echo "$item done"; return ;;
        mq2008-*) data=../shared/data/MQ2008; folds=(--folds "${item#mq2008-}" --g-max 2) ;;
        *) data=/tmp/q37/$item ;;
    esac
    OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 plboost compare "$data" "${folds[@]}" \
        --config docs/examples/tuned_comparison.toml --tune 30 --repeats 3 --quiet \
        --out "results/q37-tuned/$item" > "results/q37-tuned/$item.log" 2>&1 && echo "$item done" || echo "$item FAILED"
}
export -f one
printf '%s\n' "${items[@]}" | xargs -P 2 -I{} bash -c 'one {}'

#!/usr/bin/env bash
# Session 37, the feed (carry [".refbench"], on the machine call 1 built the extension on): does a
# deeper output queue (FEED_DEPTH=4 instead of the judge's 2) hide the decoder's slow batches beside
# ResNet-50, through DALIGenericIterator (td) and the DataLoader (tdl), and with every JPEG on the
# engines at stream priority -1 (tdl)? 200-step runs, ROUNDS rounds alternating.
#   OUT=$OUT ROUNDS=2 bash bench/diag/s37_feed.sh
set -u
export TORCH_DALI_EXT_DIR=/tmp/ext_new FEED_SCRIPT=bench/diag/feed_depth.py RUN_TIMEOUT=${RUN_TIMEOUT:-70}
E='TORCH_DALI_NVJPEG_HW_SHARE=1 TORCH_DALI_STREAM_PRIORITY=-1'
RUNS=${RUNS:-"synthetic;td;td FEED_DEPTH=4;tdl;tdl FEED_DEPTH=4;tdl $E;tdl $E FEED_DEPTH=4"} \
  OUT=$OUT/feed bash bench/diag/feed_rounds.sh

#!/usr/bin/env bash
# mdsam against samtools reading the same URL from nginx on 127.0.0.1, behind
# tests/support/fault_proxy.py adding LATENCY_MS (default 20) to every request (tc netem would
# slow the whole loopback of a shared machine): whole-file `view -c` and BAM→SAM, then QUERIES
# (100) random 10 kb region queries. Prints wall seconds, CPU seconds, the largest process's peak
# RSS and the bytes nginx sent. LINK=1 models a link instead (the proxy's link mode): a round
# trip of LATENCY_MS for each new connection's handshake and for each request, connections kept
# open between requests, so a client that reuses its connections pays fewer round trips.
# LINK_MBPS (with LINK=1) also caps each connection's bodies at that many MB/s: a TCP stream's
# window over the round trip, or an object store's per-connection limit (S3, GCS: 50-100 MB/s).
#   MDSAM=target/release/mdsam SAMTOOLS=samtools PAIRS=250000 benches/remote.sh
#   INPUT=aligned.bam LINK=1 LINK_MBPS=50 benches/remote.sh   (an existing sorted BAM instead)
set -euo pipefail
cd "$(dirname "$0")/.."
MDSAM=$(realpath "${MDSAM:-target/release/mdsam}")
SAMTOOLS=$(command -v "${SAMTOOLS:-samtools}")
PAIRS=${PAIRS:-250000}
LATENCY_MS=${LATENCY_MS:-20}
PROXY_MODE=latency; [ "${LINK:-0}" = 1 ] && PROXY_MODE=link
QUERIES=${QUERIES:-100}
# JOBS: which of "view -c", "view BAM->SAM" and "regions" to run (comma-separated; default all).
IFS=, read -r -a JOBS <<<"${JOBS:-view -c,view BAM->SAM,regions}"
REPEATS=${REPEATS:-1}
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT
source benches/lib/timing.sh

# INPUT: a coordinate-sorted BAM to serve instead of simulated reads (aligner-made data).
if [ -n "${INPUT:-}" ]; then
  ln -s "$(realpath "$INPUT")" "$tmp/x.bam"
else
  "$MDSAM" simulate -n "$PAIRS" --order coordinate --refs 4 --ref-length 20000000 -o "$tmp/x.bam"
fi
"$MDSAM" index -o "$tmp/x.bam.bai" "$tmp/x.bam"
mkdir -p "$tmp/nginx"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
user=""; [ "$(id -u)" = 0 ] && user="user root;"
cat > "$tmp/nginx/nginx.conf" <<CONF
$user daemon off; worker_processes 2; pid $tmp/nginx/pid; error_log $tmp/nginx/error.log;
events { worker_connections 512; }
http { access_log $tmp/nginx/access.log; client_body_temp_path $tmp/nginx/b; proxy_temp_path $tmp/nginx/p;
  fastcgi_temp_path $tmp/nginx/f; uwsgi_temp_path $tmp/nginx/u; scgi_temp_path $tmp/nginx/s;
  server { listen 127.0.0.1:$port; root $tmp; } }
CONF
"$NGINX" -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" & pids+=($!)
coproc PROXY { exec python3 tests/support/fault_proxy.py --upstream "127.0.0.1:$port" \
  --mode "$PROXY_MODE:$(echo "scale=3; $LATENCY_MS / 1000" | bc)${LINK_MBPS:+:$LINK_MBPS}" \
  --lifetime 3600 2>/dev/null; }
pids+=("$PROXY_PID")
read -r proxy_port <&"${PROXY[0]}"
sleep 1
url="http://127.0.0.1:$proxy_port/x.bam"
size=$(stat -L -c %s "$tmp/x.bam")
# QUERIES random 10 kb regions on the simulated references.
refs=$("$MDSAM" view -H "$tmp/x.bam" | awk -F'\t' '/^@SQ/ {sub("SN:","",$2); sub("LN:","",$3); print $2, $3}')
awk -v n="$QUERIES" 'BEGIN {srand(7)} {name[NR]=$1; len[NR]=$2}
  END {for (i = 0; i < n; i++) {r = 1 + int(rand() * NR); b = 1 + int(rand() * (len[r] - 10000));
       print name[r] ":" b "-" b + 9999}}' <<<"$refs" > "$tmp/regions"

sent() { awk '{s += $10} END {print s + 0}' "$tmp/nginx/access.log"; }
echo "file: ${INPUT:-simulated} $size bytes, $PAIRS pairs; proxy mode $PROXY_MODE, ${LATENCY_MS} ms${LINK_MBPS:+, $LINK_MBPS MB/s a connection}"
echo "tool job wall_s cpu_s rss_mb bytes_sent (REPEATS=$REPEATS rounds, tools alternating)"
for job in "${JOBS[@]}"; do
  for round in $(seq "$REPEATS"); do
    for tool in mdsam samtools; do
      bin=$MDSAM; [ $tool = samtools ] && bin=$SAMTOOLS
      : > "$tmp/nginx/access.log"
      # Each run in an empty directory of its own: both tools keep a copy of a remote index in
      # the current one and use it instead of the server's (htslib's HTS_IDX_SAVE_REMOTE), so
      # the first query of a run fetches the index and the others read the copy.
      cwd="$tmp/cwd-$tool-${job//[^a-z]/_}-$round"
      mkdir -p "$cwd"
      case $job in
        "view -c") cmd="cd $cwd && $T $bin view -c $url > /dev/null" ;;
        "view BAM->SAM") cmd="cd $cwd && $T $bin view -@ 2 $url > /dev/null" ;;
        regions) cmd="cd $cwd && for r in \$(cat $tmp/regions); do $T $bin view -c $url \$r; done > /dev/null" ;;
      esac
      read -r wall cpu rss <<<"$(run_timed "$cmd" max)"
      echo "$tool \"$job\" $wall $cpu $rss $(sent)" | tee -a "$tmp/rows"
    done
  done
done
# Ratios of the medians (samtools / mdsam): above 1, mdsam is faster or sends less.
echo "job wall_ratio bytes_ratio"
for job in "${JOBS[@]}"; do
  col() { grep -F "$1 \"$job\"" "$tmp/rows" | awk -v c="$2" '{print $c}' | median; }
  m=$(col mdsam 4); s=$(col samtools 4)
  mb=$(col mdsam 7); sb=$(col samtools 7)
  # Job names hold a space: fields shift by one for them.
  [ "$job" = regions ] && { m=$(col mdsam 3); s=$(col samtools 3); mb=$(col mdsam 6); sb=$(col samtools 6); }
  echo "\"$job\" $(echo "scale=2; $s / $m" | bc) $(echo "scale=2; $sb / $mb" | bc)"
done

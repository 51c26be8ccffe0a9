# The input hash's cache (src/common/hashcache.h): an unchanged file's
# digest comes from its entry (a forged entry shows it was used), any
# change to the file is seen (size, contents at the same size and mtime,
# a new inode), a file changed less than 2 s before its hash is not
# cached, and a bad entry, a bad directory or FD_HASH_CACHE=off is a miss
# that still gives sha256sum's digest, never an error.
source "$(dirname "$0")/lib.sh" "$@"
W=$WORK
export FD_HASH_CACHE_DIR=$W/cache FD_HASH_CACHE_MIN=0
E=$W/cache/sha256
digest() { "$BIN" info "$1" | sed -n 's/.*(SHA-256 \([0-9a-f]*\)).*/\1/p'; }
sum() { sha256sum "$1" | cut -c1-64; }
# dpc on p.npy into a new directory; echoes the digest the result holds.
run() {
  local d
  d=$(mktemp -d "$W/d.XXXXXX")
  "$BIN" dpc "$W/p.npy" --centers 3 -o "$d" -q "$@" 2> "$W/err" || { echo "exit $?: $(cat "$W/err")"; return; }
  digest "$d"
}
entries() { ls -A "$E" 2> /dev/null | tr '\n' ' '; }
ZERO=0000000000000000000000000000000000000000000000000000000000000000

"$BIN" gen blobs --n 2000 --dims 2 --clusters 3 -o "$W/p.npy" > /dev/null
touch -d "1 minute ago" "$W/p.npy" # the mtime only: the ctime is now
want=$(sum "$W/p.npy")
got=$(run)
check '[ "$got" = "$want" ]' "fresh file: digest '$got', sha256sum $want"
check '[ -z "$(entries)" ]' "a file changed under 2 s ago was cached: $(entries)"

sleep 2.2
got=$(run)
check '[ "$got" = "$want" ]' "settled file: digest '$got', sha256sum $want"
f=$(ls "$E" 2> /dev/null | head -1)
check '[ "$(entries)" = "$f " ] && grep -qE "^fcbo-dist input sha256 1 .* 32128 .* $want\$" "$E/$f"' \
  "no single entry for the settled file: '$(entries)' $(cat "$E/$f" 2> /dev/null)"
check '[ "$(stat -c %a "$E")" = 700 ] && [ "$(stat -c %a "$E/$f")" = 600 ]' "the cache is not private: $(stat -c '%a %n' "$E" "$E/$f")"

# Used: a forged digest in the entry comes out (so only the file system's
# word on the file stands between an entry and a result).
sed -i "s/ $want\$/ $ZERO/" "$E/$f"
got=$(run)
check '[ "$got" = "$ZERO" ]' "the entry was not used: digest '$got'"
got=$(FD_HASH_CACHE=off run)
check '[ "$got" = "$want" ]' "FD_HASH_CACHE=off: digest '$got', sha256sum $want"
got=$(FD_HASH_CACHE_MIN=1000000 run)
check '[ "$got" = "$want" ]' "below FD_HASH_CACHE_MIN: digest '$got', sha256sum $want"

# The same size and mtime, one byte changed: the ctime moved.
cp -p "$W/p.npy" "$W/ref"
printf '\x01' | dd of="$W/p.npy" bs=1 seek=200 conv=notrunc status=none
touch -r "$W/ref" "$W/p.npy"
want2=$(sum "$W/p.npy")
got=$(run)
check '[ "$want2" != "$want" ] && [ "$got" = "$want2" ]' "a byte changed at the same size and mtime: digest '$got', sha256sum $want2"
# A new file of the same contents and times under the name: a new inode.
sleep 2.2
cp -p "$W/ref" "$W/p2.npy" && mv "$W/p2.npy" "$W/p.npy"
got=$(run)
check '[ "$got" = "$want" ]' "a new inode: digest '$got', sha256sum $want"
sleep 2.2
got=$(run) # caches the new inode's entry
f=$(ls -t "$E" | head -1)
check 'grep -q " $want\$" "$E/$f"' "the settled new inode was not cached: $(entries)"

# Bad entries: a miss, the file's own digest, exit 0; a malformed one is
# replaced.  elsewhere: a well-formed entry of this file, forged.
sed "s/ $want\$/ $ZERO/" "$E/$f" > "$W/elsewhere"
for bad in garbage truncated long link dir; do
  rm -rf "${E:?}/$f"
  case $bad in
    garbage) printf 'not an entry\n' > "$E/$f" ;;
    truncated) printf 'fcbo-dist input sha256 1 ' > "$E/$f" ;;
    long) head -c 4096 /dev/zero | tr '\0' 'a' > "$E/$f" ;;
    link) ln -s "$W/elsewhere" "$E/$f" ;;
    dir) mkdir "$E/$f" ;;
  esac
  got=$(run)
  check '[ "$got" = "$want" ]' "entry $bad: digest '$got', sha256sum $want"
done
rm -rf "${E:?}/$f"
printf 'not an entry\n' > "$E/$f"
got=$(run)
check '[ "$got" = "$want" ] && grep -q " $want\$" "$E/$f"' "a malformed entry was not replaced: $(cat "$E/$f")"
check '[ -z "$(ls -A "$E" | grep tmp)" ]' "temporary files left in the cache: $(entries)"

# A directory that cannot be made: the run goes on.
: > "$W/plain"
got=$(FD_HASH_CACHE_DIR=$W/plain/cache run)
check '[ "$got" = "$want" ]' "unusable cache directory: digest '$got', sha256sum $want"
# The default minimum keeps small files out.
got=$(env -u FD_HASH_CACHE_MIN FD_HASH_CACHE_DIR="$W/cache2" "$BIN" dpc "$W/p.npy" --centers 3 -o "$W/dmin" -q && digest "$W/dmin")
check '[ "$got" = "$want" ] && [ ! -e "$W/cache2" ]' "a 32 KB file was cached by default: $(ls -R "$W/cache2" 2> /dev/null)"

# Bad knob values are refused by name.
for kv in FD_HASH_CACHE=maybe FD_HASH_CACHE_MIN=-1 FD_HASH_CACHE_MIN=1k; do
  env "$kv" "$BIN" dpc "$W/p.npy" --centers 3 -q > /dev/null 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q "${kv%%=*}" "$W/err"' "$kv: exit $rc, $(cat "$W/err")"
done
finish

# Every input format through the binary: intents equal brute force, for
# several shapes, densities, thread counts and minimum supports.
source "$(dirname "$0")/lib.sh" "$@"
for fmt in cxt dat csv tsv; do
  for spec in "30 8 0.3 1" "60 12 0.5 2" "15 10 0.8 3" "80 11 0.15 4" "1 5 0.5 5"; do
    set -- $spec
    f=$WORK/c$4.$fmt
    "$BIN" gen context --objects $1 --attributes $2 --density $3 --seed $4 -o "$f" || bad "gen $f"
    for ms in 0 2; do
      "$ORACLE" "$f" $ms > "$WORK/want" || bad "oracle on $f"
      for t in 1 3; do
        "$BIN" lattice "$f" --text -q -t $t --min-support $ms > "$WORK/got" || bad "lattice $f"
        check 'same_set "$WORK/got" "$WORK/want"' "$f min-support $ms threads $t: intents differ from brute force"
      done
    done
  done
done

# Hand-written variants: CSV without header or names, with CRLF; .cxt
# without the optional name line; --format overriding the extension.
printf '1,0,1\r\n0,1,1\r\n1,1,0\r\n' > "$WORK/plain.csv"
printf 'name,a,b,c\no1,1,0,1\no2,0,1,1\no3,1,1,0\n' > "$WORK/named.csv"
printf 'B\n3\n3\n\no1\no2\no3\na\nb\nc\nX.X\n.XX\nXX.\n' > "$WORK/noname.cxt"
cp "$WORK/plain.csv" "$WORK/plain.txt"
"$ORACLE" "$WORK/plain.csv" > "$WORK/want"
for f in named.csv noname.cxt; do
  "$BIN" lattice "$WORK/$f" --text -q > "$WORK/got" || bad "lattice $f"
  check 'same_set "$WORK/got" "$WORK/want"' "$f: intents differ from plain.csv"
done
"$BIN" lattice "$WORK/plain.txt" --format csv --text -q > "$WORK/got" || bad "--format csv"
check 'same_set "$WORK/got" "$WORK/want"' "--format csv"
# FIMI keeps the user's ids: ids 10 20 30 come back as 10 20 30.
printf '10 30\n20 30\n10 20\n' > "$WORK/ids.dat"
"$BIN" lattice "$WORK/ids.dat" --text -q | sort > "$WORK/got"
printf '\n10\n10 20\n10 20 30\n10 30\n20\n20 30\n30\n' | sort > "$WORK/want"
check 'cmp -s "$WORK/got" "$WORK/want"' "FIMI ids are not the user's"
# --min-support as a percentage: 34% of 3 objects = 2 objects.
"$BIN" lattice "$WORK/plain.csv" --min-support 34% --text -q | sort > "$WORK/got"
"$ORACLE" "$WORK/plain.csv" 2 | sort > "$WORK/want"
check 'cmp -s "$WORK/got" "$WORK/want"' "--min-support 34%"
finish

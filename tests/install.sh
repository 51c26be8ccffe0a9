# `cmake --install` of this build: the binary, the man page made from the
# --help texts (every command's usage in it, valid roff), the docs, the
# batch scripts and CITATION.cff; and `fcbo-dist version` names a commit.
source "$(dirname "$0")/lib.sh" "$@"
build=$(dirname "$BIN")
src=$(cd "$(dirname "$0")/.." && pwd)
cmake --install "$build" --prefix "$WORK/prefix" > "$WORK/install.log" 2>&1 ||
  { bad "cmake --install: $(tail -3 "$WORK/install.log")"; finish; exit; }
P=$WORK/prefix
check '[ -x "$P/bin/fcbo-dist" ]' "bin/fcbo-dist"
man=$P/share/man/man1/fcbo-dist.1
check '[ -s "$man" ]' "share/man/man1/fcbo-dist.1"
for c in lattice spearman dpc bcp gen info; do
  # The first usage line of each command's help, word for word.
  line=$("$BIN" "$c" --help | grep -m1 "usage:" | sed 's/\\/\\e/g')
  check 'grep -qF -- "$line" "$man"' "man page lacks '$line'"
done
check '[ "$(grep -c "^\.SH" "$man")" -ge 9 ]' "man page sections: $(grep -c "^\.SH" "$man")"
check '! grep -q "^'"'"'" "$man"' "man page: a line starting with a quote (a roff control line)"
if command -v groff > /dev/null; then
  check 'groff -man -Tutf8 -ww "$man" > /dev/null 2> "$WORK/groff.err" && [ ! -s "$WORK/groff.err" ]' "groff: $(cat "$WORK/groff.err" 2>/dev/null)"
fi
for f in running.md formats.md algorithms.md README.md LICENSE CITATION.cff; do
  check '[ -s "$P/share/doc/fcbo-dist/$f" ]' "share/doc/fcbo-dist/$f"
done
check '[ -s "$P/share/fcbo-dist/jobs/fcbo.sbatch" ]' "share/fcbo-dist/jobs/fcbo.sbatch"
v=$("$P/bin/fcbo-dist" version | head -1)
if git -C "$src" rev-parse HEAD > /dev/null 2>&1; then
  head=$(git -C "$src" rev-parse --short=12 HEAD)
  check 'echo "$v" | grep -q "(commit [^)]*$head"' "version names the commit $head: $v"
else
  check 'echo "$v" | grep -q "(commit unknown)"' "version outside git: $v"
fi
if python3 -c "import yaml" 2> /dev/null; then
  check 'python3 -c "import yaml, sys; c = yaml.safe_load(open(sys.argv[1])); sys.exit(not (c[\"cff-version\"] == \"1.2.0\" and len(c[\"references\"]) >= 4))" "$src/CITATION.cff"' "CITATION.cff"
else
  check 'grep -q "^cff-version: 1.2.0" "$src/CITATION.cff"' "CITATION.cff"
fi
finish

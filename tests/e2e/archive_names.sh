#!/usr/bin/env bash
# Names that are not ASCII go through the archive helper byte for byte,
# run as assay runs it (an empty environment: the C locale): UTF-8 names
# (an analyst's "données é.csv", an emoji, a directory "sous dossier")
# and a name that is not UTF-8 at all (latin-1 "caf\xe9.txt"), through
# create (local's archive), repack (docker's persist: a GNU tar and a
# pax tar from the sandbox), restore (docker's resume) and extract
# (docker's fetch). Before, repack refused any of them ("Can't
# translate pathname ... to UTF-8"): a docker workspace holding such a
# file could not be persisted.
source "$(dirname "$0")/lib.bash"
ARCHIVER=${ASSAY_ARCHIVE_BIN:-$(dirname "$ASSAY")/assay-archive}
[ -x "$ARCHIVER" ] || { echo "FAIL no assay-archive beside $ASSAY"; exit 1; }
cd "$T"
arc() { env -i PATH=/usr/bin:/bin "$ARCHIVER" "$@"; }

mkdir -p ws/"sous dossier"
echo a >ws/"données é.csv"
echo b >ws/"emoji 📈.png"
echo c >ws/"sous dossier/ü.txt"
echo d >ws/"$(printf 'caf\xe9.txt')"

# names.py WHAT PATH: the sorted names (as bytes, repr) of a tar (maybe
# zstd), or of a directory's tree
cat >names.py <<'EOF'
import io, os, sys, tarfile, subprocess
what, path = sys.argv[1], sys.argv[2]
names = []
if what == "dir":
    for d, subs, files in os.walk(os.fsencode(path)):
        rel = os.path.relpath(d, os.fsencode(path))
        for n in subs + files:
            names.append(os.path.normpath(os.path.join(rel, n)))
else:
    data = open(path, "rb").read()
    if data[:4] == b"\x28\xb5\x2f\xfd":
        data = subprocess.run(["zstd", "-qdc"], input=data,
                              stdout=subprocess.PIPE, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data), encoding="utf-8",
                      errors="surrogateescape") as t:
        for m in t:
            n = m.name.encode("utf-8", "surrogateescape").rstrip(b"/")
            if n not in (b"", b"."):
                names.append(n)
for n in sorted(names):
    print(repr(n))
EOF
$PY names.py dir ws >want.txt
check "the tree holds its four names and a directory" test "$(wc -l <want.txt)" = 5

check "create: exit 0" arc create ws.tar.zst "$T/ws"
$PY names.py tar ws.tar.zst >got.txt
check "create: every name byte for byte" diff want.txt got.txt

tar -C "$T" -cf gnu.tar ws
check "repack of a GNU tar: exit 0" sh -c "env -i PATH=/usr/bin:/bin '$ARCHIVER' repack rp1.tar.zst ws <gnu.tar"
$PY names.py tar rp1.tar.zst >got.txt
check "repack of a GNU tar: every name byte for byte" diff want.txt got.txt

tar -C "$T" --format=pax -cf pax.tar ws
check "repack of a pax tar: exit 0" sh -c "env -i PATH=/usr/bin:/bin '$ARCHIVER' repack rp2.tar.zst ws <pax.tar"
$PY names.py tar rp2.tar.zst >got.txt
check "repack of a pax tar: every name byte for byte" diff want.txt got.txt

check "restore: exit 0" sh -c "env -i PATH=/usr/bin:/bin '$ARCHIVER' restore rp2.tar.zst >rs.tar"
$PY names.py tar rs.tar >got.txt
check "restore: every name byte for byte" diff want.txt got.txt

mkdir out
check "extract: exit 0" sh -c "env -i PATH=/usr/bin:/bin '$ARCHIVER' extract out ws <pax.tar"
$PY names.py dir out >got.txt
check "extract: every name byte for byte" diff want.txt got.txt
check "... and the contents" test "$(cat out/"données é.csv" out/"$(printf 'caf\xe9.txt')")" = "a
d"
finish

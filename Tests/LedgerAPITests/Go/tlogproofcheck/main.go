// tlogproofcheck verifies a C2SP tlog-proof (c2sp.org/tlog-proof@v1) with
// golang.org/x/mod/sumdb/tlog and sumdb/note (Debian's golang-golang-x-mod-dev), a verifier
// no one on the ledger wrote.
//
//	go run main.go PROOF_FILE LOG_VKEY [WITNESS_VKEY...]
//
// It reads the proof as c2sp.org/tlog-proof says (the header line, an optional `extra` line,
// the `index` line, one base64 hash a line, an empty line, the checkpoint verbatim), opens the
// checkpoint with the log's key (note.Open), checks that every witness key given has a valid
// cosignature on it (c2sp.org/tlog-cosignature: Ed25519 over "cosignature/v1\ntime <t>\n" and
// the checkpoint's text, sumdb/note does not know that type), and recomputes the entry's
// inclusion with tlog.CheckRecord, the entry being the extra data (its record hash
// SHA-256(0x00 || extra)). Prints "OK index I size N root R cosigned-by W1,W2" and exits 0,
// or "FAIL: ..." and exits 1.
package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

func fail(format string, args ...interface{}) {
	fmt.Printf("FAIL: "+format+"\n", args...)
	os.Exit(1)
}

// line cuts the next line (without its newline) off rest; a line must end in a newline.
func line(rest []byte) (string, []byte) {
	i := bytes.IndexByte(rest, '\n')
	if i < 0 {
		fail("the proof ends inside a line")
	}
	return string(rest[:i]), rest[i+1:]
}

// witness is a cosignature/v1 key: name+<8 hex digits>+base64(0x04 || Ed25519 public key).
type witness struct {
	name string
	hash uint32
	key  ed25519.PublicKey
}

func parseWitness(vkey string) witness {
	parts := strings.SplitN(vkey, "+", 3)
	if len(parts) != 3 || len(parts[1]) != 8 {
		fail("witness key %q", vkey)
	}
	hash, err := strconv.ParseUint(parts[1], 16, 32)
	key, err2 := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || err2 != nil || len(key) != 33 || key[0] != 0x04 {
		fail("witness key %q", vkey)
	}
	sum := sha256.Sum256(append([]byte(parts[0]+"\n"), key...))
	if binary.BigEndian.Uint32(sum[:4]) != uint32(hash) {
		fail("witness key %q: its key id is not SHA-256(name, newline, 0x04, key)", vkey)
	}
	return witness{parts[0], uint32(hash), ed25519.PublicKey(key[1:])}
}

// cosigned reports whether one of sigs is w's valid cosignature of text.
func (w witness) cosigned(text string, sigs []note.Signature) bool {
	for _, s := range sigs {
		if s.Name != w.name || s.Hash != w.hash {
			continue
		}
		blob, err := base64.StdEncoding.DecodeString(s.Base64)
		if err != nil || len(blob) != 4+8+ed25519.SignatureSize {
			fail("the cosignature by %s is malformed", w.name)
		}
		time := binary.BigEndian.Uint64(blob[4:12])
		message := fmt.Sprintf("cosignature/v1\ntime %d\n%s", time, text)
		if !ed25519.Verify(w.key, []byte(message), blob[12:]) {
			fail("the cosignature by %s does not verify", w.name)
		}
		return true
	}
	return false
}

func main() {
	if len(os.Args) < 3 {
		fail("usage: tlogproofcheck PROOF_FILE LOG_VKEY [WITNESS_VKEY...]")
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail("%v", err)
	}
	verifier, err := note.NewVerifier(os.Args[2])
	if err != nil {
		fail("log key: %v", err)
	}

	header, rest := line(raw)
	if header != "c2sp.org/tlog-proof@v1" {
		fail("the first line is %q, not c2sp.org/tlog-proof@v1", header)
	}
	next, rest := line(rest)
	var extra []byte
	hasExtra := strings.HasPrefix(next, "extra ")
	if hasExtra {
		if extra, err = base64.StdEncoding.DecodeString(strings.TrimPrefix(next, "extra ")); err != nil {
			fail("extra: %v", err)
		}
		next, rest = line(rest)
	}
	if !hasExtra {
		fail("no extra line: the ledger's proofs carry the entry")
	}
	if !strings.HasPrefix(next, "index ") {
		fail("expected the index line, got %q", next)
	}
	digits := strings.TrimPrefix(next, "index ")
	index, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || index < 0 || strconv.FormatInt(index, 10) != digits {
		fail("index %q is not a decimal without leading zeroes", digits)
	}
	var proof tlog.RecordProof
	for {
		var h string
		h, rest = line(rest)
		if h == "" {
			break
		}
		hash, err := tlog.ParseHash(h)
		if err != nil {
			fail("proof line %q: %v", h, err)
		}
		proof = append(proof, hash)
	}

	n, err := note.Open(rest, note.VerifierList(verifier))
	if err != nil {
		fail("checkpoint: %v", err)
	}
	lines := strings.Split(n.Text, "\n")
	if len(lines) < 4 || lines[0] != verifier.Name() {
		fail("checkpoint %q is not of the log %s", n.Text, verifier.Name())
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil {
		fail("checkpoint size %q: %v", lines[1], err)
	}
	root, err := tlog.ParseHash(lines[2])
	if err != nil {
		fail("checkpoint root %q: %v", lines[2], err)
	}

	var names []string
	for _, vkey := range os.Args[3:] {
		w := parseWitness(vkey)
		if !w.cosigned(n.Text, n.UnverifiedSigs) {
			fail("no cosignature by %s", w.name)
		}
		names = append(names, w.name)
	}

	if err := tlog.CheckRecord(proof, size, root, index, tlog.RecordHash(extra)); err != nil {
		fail("inclusion of the entry at index %d in the tree of size %d: %v", index, size, err)
	}
	fmt.Printf("OK index %d size %d root %s cosigned-by %s\n", index, size, base64.StdEncoding.EncodeToString(root[:]), strings.Join(names, ","))
}

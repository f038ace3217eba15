// tilecheck verifies a ledger's /tlog tiles with golang.org/x/mod/sumdb/tlog and
// sumdb/note (Debian's golang-golang-x-mod-dev), a verifier no one on the ledger wrote.
//
//	go run main.go TLOG_URL VERIFIER_KEY
//
// TLOG_URL is the log's root: http://host/tlog, or a shard's http://host/tlog/shard/0.
// It opens the published checkpoint with the key, reads hash tiles through TileHashReader
// (C2SP paths: Go's "tile/8/L/N" without the height), checks the tree hash, record proofs
// for leaves across the tree and tree proofs from earlier sizes, and that each entry
// bundle's entries hash to the level-0 tile. Prints "OK" and exits 0, or the failure and 1.
package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

var base string

func get(path string) ([]byte, error) {
	resp, err := http.Get(base + "/" + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	return body, nil
}

type tiles struct{}

func (tiles) Height() int { return 8 }

func (tiles) ReadTiles(ts []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(ts))
	for i, t := range ts {
		data, err := get(strings.Replace(t.Path(), "tile/8/", "tile/", 1))
		if err != nil {
			return nil, err
		}
		out[i] = data
	}
	return out, nil
}

func (tiles) SaveTiles([]tlog.Tile, [][]byte) {}

func fail(format string, args ...interface{}) {
	fmt.Printf("FAIL: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	base = strings.TrimSuffix(os.Args[1], "/")
	verifier, err := note.NewVerifier(os.Args[2])
	if err != nil {
		fail("verifier key: %v", err)
	}
	raw, err := get("checkpoint")
	if err != nil {
		fail("%v", err)
	}
	n, err := note.Open(raw, note.VerifierList(verifier))
	if err != nil {
		fail("checkpoint signature: %v", err)
	}
	lines := strings.Split(n.Text, "\n")
	size, _ := strconv.ParseInt(lines[1], 10, 64)
	root, err := tlog.ParseHash(lines[2])
	if err != nil || size < 2 {
		fail("checkpoint %q: %v", n.Text, err)
	}
	tree := tlog.Tree{N: size, Hash: root}
	reader := tlog.TileHashReader(tree, tiles{})
	th, err := tlog.TreeHash(size, reader)
	if err != nil || th != root {
		fail("tree hash %v: %v, want %v", th, err, root)
	}
	// Entry bundles: each entry hashes to its level-0 tile's hash; collect the record hashes.
	records := make([]tlog.Hash, 0, size)
	for b := int64(0); b*256 < size; b++ {
		w := size - b*256
		if w > 256 {
			w = 256
		}
		tile := tlog.Tile{H: 8, L: 0, N: b, W: int(w)}
		path := strings.Replace(tile.Path(), "tile/8/0/", "tile/entries/", 1)
		bundle, err := get(path)
		if err != nil {
			fail("%v", err)
		}
		hashes, err := get(strings.Replace(tile.Path(), "tile/8/", "tile/", 1))
		if err != nil {
			fail("%v", err)
		}
		for i := int64(0); i < w; i++ {
			if len(bundle) < 2 {
				fail("bundle %d ends early at entry %d", b, i)
			}
			length := int(bundle[0])<<8 | int(bundle[1])
			h := tlog.RecordHash(bundle[2 : 2+length])
			bundle = bundle[2+length:]
			if string(h[:]) != string(hashes[i*32:(i+1)*32]) {
				fail("entry %d of bundle %d does not hash to its level-0 tile", i, b)
			}
			records = append(records, h)
		}
		if len(bundle) != 0 {
			fail("bundle %d has %d bytes left over", b, len(bundle))
		}
	}
	for _, i := range []int64{0, 1, size / 3, size / 2, size - 2, size - 1} {
		p, err := tlog.ProveRecord(size, i, reader)
		if err != nil {
			fail("ProveRecord(%d, %d): %v", size, i, err)
		}
		if err := tlog.CheckRecord(p, size, root, i, records[i]); err != nil {
			fail("CheckRecord(%d): %v", i, err)
		}
	}
	for _, m := range []int64{1, 2, size / 3, size / 2, size - 1} {
		if m < 1 {
			continue
		}
		old, err := tlog.TreeHash(m, reader)
		if err != nil {
			fail("TreeHash(%d): %v", m, err)
		}
		p, err := tlog.ProveTree(size, m, reader)
		if err != nil {
			fail("ProveTree(%d, %d): %v", size, m, err)
		}
		if err := tlog.CheckTree(p, size, root, m, old); err != nil {
			fail("CheckTree(%d, %d): %v", size, m, err)
		}
	}
	fmt.Printf("OK size %d root %s\n", size, base64.StdEncoding.EncodeToString(root[:]))
}

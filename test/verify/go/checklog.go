// checklog checks audit-stream's checkpoints, proofs and tiles with an independent implementation: Go's
// golang.org/x/mod/sumdb/note (signed notes) and golang.org/x/mod/sumdb/tlog (RFC 6962 trees, proofs, tiles).
// Usage: go run checklog.go <input.json>; prints what it checked, exits 1 on the first failure.
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type inclusion struct {
	Index int64    `json:"index"`
	Size  int64    `json:"size"`
	Data  string   `json:"data"`
	Proof []string `json:"proof"`
}

type consistency struct {
	From  int64    `json:"from"`
	To    int64    `json:"to"`
	Proof []string `json:"proof"`
}

type input struct {
	VerifierKey string        `json:"verifierKey"`
	Checkpoints []string      `json:"checkpoints"`
	Inclusion   []inclusion   `json:"inclusion"`
	Consistency []consistency `json:"consistency"`
	TileBase    string        `json:"tileBase"`
	APIKey      string        `json:"apiKey"`
	// Leaves (index and base64 canonical bytes) proven again from the tiles alone.
	TileLeaves []inclusion `json:"tileLeaves"`
}

type checkpoint struct {
	origin string
	tree   tlog.Tree
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}

func hashOf(s string) tlog.Hash {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != tlog.HashSize {
		fail("bad hash %q", s)
	}
	var h tlog.Hash
	copy(h[:], b)
	return h
}

func hashes(list []string) []tlog.Hash {
	out := make([]tlog.Hash, len(list))
	for i, s := range list {
		out[i] = hashOf(s)
	}
	return out
}

// openCheckpoint verifies the signed note and parses its tlog-checkpoint body (origin, size, root).
func openCheckpoint(msg string, verifiers note.Verifiers) checkpoint {
	n, err := note.Open([]byte(msg), verifiers)
	if err != nil {
		fail("note.Open: %v", err)
	}
	lines := strings.Split(n.Text, "\n")
	if len(lines) < 4 {
		fail("checkpoint body has too few lines: %q", n.Text)
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil {
		fail("checkpoint size: %v", err)
	}
	return checkpoint{origin: lines[0], tree: tlog.Tree{N: size, Hash: hashOf(lines[2])}}
}

// c2spTiles reads tiles over HTTP at their C2SP paths: x/mod's paths carry the height (tile/8/L/N), C2SP's do not.
type c2spTiles struct {
	base, apiKey string
	fetched      int
}

func (r *c2spTiles) Height() int { return 8 }

func (r *c2spTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		path := strings.Replace(t.Path(), "tile/8/", "tile/", 1)
		back, err := tlog.ParseTilePath("tile/8/" + strings.TrimPrefix(path, "tile/"))
		if err != nil || back != t {
			return nil, fmt.Errorf("C2SP path %s does not name tile %+v", path, t)
		}
		req, _ := http.NewRequest("GET", r.base+"/"+path, nil)
		req.Header.Set("Authorization", "Bearer "+r.apiKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return nil, err
		}
		if res.StatusCode != 200 {
			return nil, fmt.Errorf("%s: %d %s", path, res.StatusCode, data)
		}
		out[i] = data
		r.fetched++
	}
	return out, nil
}

func (r *c2spTiles) SaveTiles(tiles []tlog.Tile, data [][]byte) {}

func main() {
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail("%v", err)
	}
	var in input
	if err := json.Unmarshal(raw, &in); err != nil {
		fail("input: %v", err)
	}
	v, err := note.NewVerifier(in.VerifierKey)
	if err != nil {
		fail("note.NewVerifier: %v", err)
	}
	verifiers := note.VerifierList(v)
	trees := map[int64]tlog.Hash{}
	var latest checkpoint
	for _, c := range in.Checkpoints {
		cp := openCheckpoint(c, verifiers)
		trees[cp.tree.N] = cp.tree.Hash
		if cp.tree.N >= latest.tree.N {
			latest = cp
		}
	}
	for _, p := range in.Inclusion {
		root, ok := trees[p.Size]
		if !ok {
			fail("no checkpoint of size %d", p.Size)
		}
		data, _ := base64.StdEncoding.DecodeString(p.Data)
		if err := tlog.CheckRecord(hashes(p.Proof), p.Size, root, p.Index, tlog.RecordHash(data)); err != nil {
			fail("CheckRecord(%d in %d): %v", p.Index, p.Size, err)
		}
	}
	for _, p := range in.Consistency {
		if err := tlog.CheckTree(hashes(p.Proof), p.To, trees[p.To], p.From, trees[p.From]); err != nil {
			fail("CheckTree(%d -> %d): %v", p.From, p.To, err)
		}
	}
	tiles := &c2spTiles{base: in.TileBase, apiKey: in.APIKey}
	if in.TileBase != "" {
		hr := tlog.TileHashReader(latest.tree, tiles)
		th, err := tlog.TreeHash(latest.tree.N, hr)
		if err != nil || th != latest.tree.Hash {
			fail("TreeHash from tiles: %v %v", th, err)
		}
		for _, p := range in.TileLeaves {
			data, _ := base64.StdEncoding.DecodeString(p.Data)
			proof, err := tlog.ProveRecord(latest.tree.N, p.Index, hr)
			if err != nil {
				fail("ProveRecord from tiles: %v", err)
			}
			if err := tlog.CheckRecord(proof, latest.tree.N, latest.tree.Hash, p.Index, tlog.RecordHash(data)); err != nil {
				fail("CheckRecord from tiles (%d): %v", p.Index, err)
			}
		}
		for n := range trees {
			proof, err := tlog.ProveTree(latest.tree.N, n, hr)
			if err != nil {
				fail("ProveTree from tiles: %v", err)
			}
			if err := tlog.CheckTree(proof, latest.tree.N, latest.tree.Hash, n, trees[n]); err != nil {
				fail("CheckTree from tiles (%d): %v", n, err)
			}
		}
	}
	fmt.Printf("ok origin=%s checkpoints=%d inclusion=%d consistency=%d tileLeaves=%d tiles=%d\n", latest.origin, len(in.Checkpoints), len(in.Inclusion), len(in.Consistency), len(in.TileLeaves), tiles.fetched)
}

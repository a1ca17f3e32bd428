// Command verify checks one C2SP tlog-proof with Go's own golang.org/x/mod/sumdb packages
// (Debian's golang-golang-x-mod-dev), written from the C2SP text, not from toolgate's code:
// note.Open checks the checkpoint's signature with the log's verifier key, and tlog.CheckRecord
// the inclusion of the leaf SHA-256(0x00 || SHA-256(extra)) in the checkpoint's tree.
//
//	verify FILE VERIFIER-KEY
//
// It prints "ok <index> <tree size>" and exits 0, or says why not and exits 1.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "verify:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: verify FILE VERIFIER-KEY")
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	// The proof's lines up to the blank one; the checkpoint's note after it.
	head, checkpoint, found := bytes.Cut(data, []byte("\n\n"))
	if !found {
		return fmt.Errorf("no blank line before the checkpoint")
	}
	lines := strings.Split(string(head), "\n")
	if lines[0] != "c2sp.org/tlog-proof@v1" {
		return fmt.Errorf("not a tlog-proof: %q", lines[0])
	}
	lines = lines[1:]
	if len(lines) == 0 {
		return fmt.Errorf("no index line")
	}
	var extra []byte
	if strings.HasPrefix(lines[0], "extra ") {
		if extra, err = base64.StdEncoding.DecodeString(lines[0][len("extra "):]); err != nil {
			return fmt.Errorf("extra: %v", err)
		}
		lines = lines[1:]
	}
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "index ") {
		return fmt.Errorf("no index line")
	}
	index, err := strconv.ParseInt(lines[0][len("index "):], 10, 64)
	if err != nil {
		return fmt.Errorf("index: %v", err)
	}
	var proof tlog.RecordProof
	for _, line := range lines[1:] {
		hash, err := base64.StdEncoding.DecodeString(line)
		if err != nil || len(hash) != tlog.HashSize {
			return fmt.Errorf("a proof hash does not read: %q", line)
		}
		var h tlog.Hash
		copy(h[:], hash)
		proof = append(proof, h)
	}

	verifier, err := note.NewVerifier(args[1])
	if err != nil {
		return fmt.Errorf("the key: %v", err)
	}
	opened, err := note.Open(checkpoint, note.VerifierList(verifier))
	if err != nil {
		return fmt.Errorf("the checkpoint: %v", err)
	}
	body := strings.Split(opened.Text, "\n")
	if len(body) < 4 || body[0] != verifier.Name() {
		return fmt.Errorf("the checkpoint's origin is not the key's name: %q", opened.Text)
	}
	size, err := strconv.ParseInt(body[1], 10, 64)
	if err != nil {
		return fmt.Errorf("the checkpoint's size: %v", err)
	}
	root, err := base64.StdEncoding.DecodeString(body[2])
	if err != nil || len(root) != tlog.HashSize {
		return fmt.Errorf("the checkpoint's root does not read")
	}

	// The leaf's data is the event's chain hash, SHA-256 of the extra data.
	var top tlog.Hash
	copy(top[:], root)
	digest := sha256.Sum256(extra)
	leaf := tlog.RecordHash(digest[:])
	if err := tlog.CheckRecord(proof, size, top, index, leaf); err != nil {
		return fmt.Errorf("inclusion: %v", err)
	}
	fmt.Printf("ok %d %d\n", index, size)
	return nil
}

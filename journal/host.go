package journal

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// HostFile holds this host's id for a repository, relative to its root. It
// lives under .memsync/, which is host-local and never committed (SPEC §2),
// so every clone, on every host, gets an id of its own at its first append.
const HostFile = ".memsync/host"

// hostIDLen is the length of a generated host id: 8 characters of
// [a-z2-7], 40 random bits.
const hostIDLen = 8

// ValidHostID reports whether s can be a host id: 1 to 16 characters of
// [a-z0-9] (no '_' or '-': a uuid's parts stay unambiguous).
func ValidHostID(s string) bool {
	if len(s) == 0 || len(s) > 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// HostID returns this host's id for the repository at root, creating
// HostFile with a random one at first use (two processes creating it at
// once agree: the file is created exclusively and the loser reads it).
func HostID(root string) (string, error) {
	path := filepath.Join(root, filepath.FromSlash(HostFile))
	for attempt := 0; ; attempt++ {
		data, err := os.ReadFile(path)
		if err == nil {
			id := strings.TrimSpace(string(data))
			if id == "" && attempt < 50 {
				continue // being written by the process that created it
			}
			if !ValidHostID(id) {
				return "", fmt.Errorf("host id: %s holds %q, not 1-16 characters of a-z and 0-9", path, id)
			}
			return id, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("host id: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", fmt.Errorf("host id: %w", err)
		}
		id, err := newHostID()
		if err != nil {
			return "", err
		}
		tmp, err := os.CreateTemp(filepath.Dir(path), "host.*.memsync-tmp")
		if err != nil {
			return "", fmt.Errorf("host id: %w", err)
		}
		_, werr := tmp.WriteString(id + "\n")
		if serr := tmp.Sync(); werr == nil {
			werr = serr
		}
		if cerr := tmp.Close(); werr == nil {
			werr = cerr
		}
		if werr == nil {
			// A link is atomic and refused when the name exists: the file
			// appears whole, and the first creator wins.
			werr = os.Link(tmp.Name(), path)
		}
		os.Remove(tmp.Name())
		if werr == nil {
			return id, nil
		}
		if !errors.Is(werr, os.ErrExist) {
			return "", fmt.Errorf("host id: %w", werr)
		}
	}
}

func newHostID() (string, error) {
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	b := make([]byte, hostIDLen)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("host id: %w", err)
	}
	for i := range b {
		b[i] = alphabet[b[i]&31]
	}
	return string(b), nil
}

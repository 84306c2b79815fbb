//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package embedded

import "os"

// mapFile reads the file at path (no mapping on this system).
func mapFile(path string) ([]byte, func(), error) {
	b, err := os.ReadFile(path)
	return b, func() {}, err
}

//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package mapped

import "os"

// File returns the bytes of the file at path, read whole (no mapping on
// this system), and a no-op in place of unmapping them.
func File(path string) (data []byte, unmap func(), err error) {
	data, err = os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return data, func() {}, nil
}

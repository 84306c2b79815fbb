package journal

import "io"

// CompleteLength is the length of the first size bytes of r up to and
// including their last newline: the part of a journal (or any JSONL file)
// made of whole lines. A torn last line, one a writer is still appending or
// one an interrupted writer left, lies past it.
func CompleteLength(r io.ReaderAt, size int64) (int64, error) {
	buf := make([]byte, 4096)
	for end := size; end > 0; {
		n := min(int64(len(buf)), end)
		if _, err := r.ReadAt(buf[:n], end-n); err != nil && err != io.EOF {
			return 0, err
		}
		for i := n - 1; i >= 0; i-- {
			if buf[i] == '\n' {
				return end - n + i + 1, nil
			}
		}
		end -= n
	}
	return 0, nil
}

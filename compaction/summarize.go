package compaction

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memsync/memsync/journal"
)

// DefaultSummarizerTimeout bounds one run of the external summarizer.
const DefaultSummarizerTimeout = 2 * time.Minute

// maxSummaryBytes bounds what a summarizer may print.
const maxSummaryBytes = 1 << 20

// summarize runs the summarizer command with the agent's current (not
// superseded) archived records on stdin, one canonical JSON record per line,
// in archive order, and returns its markdown. Anything short of a clean
// exit with non-empty UTF-8 output that leaves the markers alone is an
// error, and the caller falls back to the deterministic text.
func summarize(ctx context.Context, argv []string, timeout time.Duration, l journal.Layout, archiveDir, agent string, f *fold) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", err
	}
	var stdout limitedBuffer
	var stderr limitedBuffer
	stdout.max, stderr.max = maxSummaryBytes, 16<<10
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	feedErr := make(chan error, 1)
	go func() {
		feedErr <- feed(stdin, l, archiveDir, agent, f)
	}()
	waitErr := cmd.Wait()
	ferr := <-feedErr
	switch {
	case ctx.Err() != nil:
		return "", fmt.Errorf("timed out after %v", timeout)
	case waitErr != nil:
		return "", fmt.Errorf("%v; stderr: %s", waitErr, strings.TrimSpace(stderr.String()))
	case ferr != nil && !errors.Is(ferr, errClosedPipe):
		return "", fmt.Errorf("writing records: %v", ferr)
	case stdout.over:
		return "", fmt.Errorf("printed more than %d bytes", maxSummaryBytes)
	}
	out := strings.TrimSpace(stdout.String())
	switch {
	case out == "":
		return "", errors.New("printed nothing")
	case !utf8.ValidString(out):
		return "", errors.New("printed invalid UTF-8")
	case strings.Contains(out, "memsync:compaction:"):
		return "", errors.New("printed a memsync section marker")
	}
	return out, nil
}

var errClosedPipe = errors.New("summarizer closed its input early")

// feed writes the current archived records to w and closes it. A
// summarizer that stops reading early is its own business.
func feed(w io.WriteCloser, l journal.Layout, archiveDir, agent string, f *fold) error {
	defer w.Close()
	bw := bufio.NewWriterSize(w, 64<<10)
	files, err := archiveFiles(l, archiveDir)
	if err != nil {
		return err
	}
	for _, path := range files {
		seen := map[string]bool{} // per file, as in foldArchive
		err := eachLine(path, func(l journal.Line) error {
			if l.Err != nil || l.Record.Agent != agent || f.retired(&l.Record) {
				return nil
			}
			if k := recordKey(&l.Record); seen[k] {
				return nil
			} else {
				seen[k] = true
			}
			if _, err := bw.Write(append(l.Record.Canonical(), '\n')); err != nil {
				return errClosedPipe
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return errClosedPipe
	}
	return nil
}

// limitedBuffer keeps the first max bytes written and notes the overflow.
type limitedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); len(p) > room {
		b.over = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

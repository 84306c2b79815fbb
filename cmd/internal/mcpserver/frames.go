package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxFrame is the longest line the MCP server reads as one message (the
// SDK's own default bound).
const maxFrame = mcp.DefaultMaxLineLength

// frameFilter stands between the client's stdin and the SDK's stdio
// transport, which ends the session on the first frame it cannot decode
// (not JSON, not UTF-8, a batch, a version other than "2.0", a bad id):
// the agent would lose its memory tools for the rest of its session. The
// filter reads one newline-delimited frame at a time (the MCP stdio
// framing), passes each well-formed JSON-RPC 2.0 message on unchanged,
// answers every other one itself with a JSON-RPC error (parse error
// -32700, invalid request -32600; the frame's id when it has a valid one,
// else null) and says why on stderr, and skips blank lines.
type frameFilter struct {
	in      *bufio.Reader
	out     io.Writer // shared with the SDK: a messageWriter
	stderr  io.Writer
	max     int    // the longest frame passed on, in bytes
	pending []byte // what Read has yet to hand out: whole frames, newline-ended
	err     error  // the input's error, returned once pending is empty
}

func newFrameFilter(in io.Reader, out, stderr io.Writer, max int) *frameFilter {
	return &frameFilter{in: bufio.NewReaderSize(in, 64<<10), out: out, stderr: stderr, max: max}
}

// Read implements io.Reader over the well-formed frames of the input.
func (f *frameFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, tooLong, err := f.readLine()
		f.err = err
		if frame, ok := f.check(line, tooLong); ok {
			f.pending = append(frame, '\n')
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// Close implements io.Closer; the input belongs to the process.
func (f *frameFilter) Close() error { return nil }

// readLine reads up to the next newline (or the end of the input), without
// it; tooLong when the line held more than f.max bytes, whose bytes beyond
// the bound are read and dropped.
func (f *frameFilter) readLine() (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := f.in.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > f.max+1 { // +1: the newline
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(buf, []byte{'\n'}), tooLong, err
	}
}

// check returns the frame to pass on, or answers it with an error and
// returns false; a blank line is dropped without an answer.
func (f *frameFilter) check(line []byte, tooLong bool) ([]byte, bool) {
	frame := bytes.TrimSpace(line)
	switch {
	case tooLong:
		f.refuse(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: a message longer than %d bytes", f.max))
	case len(frame) == 0:
	case !utf8.Valid(frame):
		f.refuse(nil, jsonrpc.CodeParseError, "parse error: the message is not UTF-8")
	case !json.Valid(frame):
		f.refuse(nil, jsonrpc.CodeParseError, "parse error: the message is not one JSON value")
	case frame[0] == '[':
		f.refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: a batch (this server takes one message per line)")
	case frame[0] != '{':
		f.refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: not a JSON-RPC object")
	default:
		if _, err := jsonrpc.DecodeMessage(frame); err != nil {
			f.refuse(frameID(frame), jsonrpc.CodeInvalidRequest, "invalid request: "+clip(err.Error(), maxReason))
			return nil, false
		}
		return frame, true
	}
	return nil, false
}

// maxReason bounds the decoder's words in an error: they may quote the
// rest of the frame.
const maxReason = 200

// clip is s cut to at most n bytes, on a rune boundary, marked when cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// frameID is the id of an object frame when it is a string or a number
// a client can read back (a float64), else nil (JSON null).
func frameID(frame []byte) json.RawMessage {
	var probe map[string]json.RawMessage
	if json.Unmarshal(frame, &probe) != nil {
		return nil
	}
	id := probe["id"]
	var v any
	if len(id) == 0 || json.Unmarshal(id, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return id
	}
	return nil
}

// refuse writes a JSON-RPC error response for a frame the SDK would have
// choked on.
func (f *frameFilter) refuse(id json.RawMessage, code int64, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	resp, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: msg}})
	if err != nil {
		return // a string, a number and an id out of json.Unmarshal always encode
	}
	fmt.Fprintf(f.stderr, "memsync mcp: answered a malformed message with error %d (%s); serving on\n", code, msg)
	f.out.Write(append(resp, '\n'))
}

// messageWriter serialises whole writes to the client's stdout: the SDK
// writes each message in one call, and so does the filter, so the two
// never interleave within a line.
type messageWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *messageWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close implements io.Closer; the output belongs to the process.
func (l *messageWriter) Close() error { return nil }

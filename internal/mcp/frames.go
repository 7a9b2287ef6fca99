package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"
)

// MaxFrame is the longest frame (one line of JSON) the stdio transport
// reads: the SDK's own default. A longer one is answered with an
// Invalid Request error and skipped; the server goes on.
const MaxFrame = 16 << 20

// JSON-RPC 2.0's error codes for frames that are not requests
// (https://www.jsonrpc.org/specification#error_object).
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// lockedWriter lets the SDK's messages and the filter's error answers
// share stdout a whole line at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (*lockedWriter) Close() error { return nil }

// filterFrames copies the frames of r that are JSON-RPC 2.0 messages to
// sdk, one per line, and answers every other frame on out with the error
// the JSON-RPC spec names for it: -32700 for a frame that is not JSON (or
// not UTF-8), -32600 for JSON that is not a request, notification or
// response (an empty object, a wrong "jsonrpc", a batch, a frame over
// maxFrame bytes). The SDK ends the session on any frame it cannot read;
// filtered, it only ever sees messages, and the server keeps serving. It
// returns when r ends (closing sdk, so the SDK sees end of input) or sdk
// is closed.
func filterFrames(r io.Reader, sdk *io.PipeWriter, out io.Writer, maxFrame int) {
	br := bufio.NewReader(r)
	for {
		line, tooLong, err := readFrame(br, maxFrame)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			var ans []byte
			if tooLong {
				ans = frameError(nil, codeInvalidRequest, fmt.Sprintf("invalid request: the frame is over %d bytes", maxFrame))
			} else {
				ans = checkFrame(line)
			}
			if ans != nil {
				if _, werr := out.Write(ans); werr != nil {
					sdk.CloseWithError(werr)
					return
				}
			} else if _, werr := sdk.Write(append(bytes.TrimRight(line, "\r\n"), '\n')); werr != nil {
				return // the SDK stopped reading
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				sdk.Close()
			} else {
				sdk.CloseWithError(err)
			}
			return
		}
	}
}

// readFrame reads one line of at most max bytes. A longer line is read to
// its end and dropped: tooLong is true and line is nil.
func readFrame(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > max+2 { // "\r\n" is not part of the frame
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, true, err
		}
		return buf, false, err
	}
}

// checkFrame returns the error answer for a frame that is not a JSON-RPC
// 2.0 message, or nil for one that is.
func checkFrame(line []byte) []byte {
	if !utf8.Valid(line) {
		return frameError(nil, codeParseError, "parse error: the frame is not UTF-8")
	}
	if !json.Valid(line) {
		return frameError(nil, codeParseError, "parse error: the frame is not one JSON value")
	}
	trimmed := bytes.TrimSpace(line)
	switch trimmed[0] {
	case '[':
		return frameError(nil, codeInvalidRequest, "invalid request: JSON-RPC batches are not supported (MCP 2025-06-18 removed them); send one message per line")
	case '{':
	default:
		return frameError(nil, codeInvalidRequest, "invalid request: a frame must be a JSON-RPC 2.0 object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &m); err != nil {
		return frameError(nil, codeParseError, "parse error: the frame is not one JSON object")
	}
	id, hasID := m["id"]
	if hasID && !validID(id) {
		return frameError(nil, codeInvalidRequest, "invalid request: id must be a string or an integer")
	}
	if !hasID {
		id = nil
	}
	if v, ok := m["jsonrpc"]; !ok || string(bytes.TrimSpace(v)) != `"2.0"` {
		return frameError(id, codeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if method, ok := m["method"]; ok {
		var s string
		if json.Unmarshal(method, &s) != nil || s == "" {
			return frameError(id, codeInvalidRequest, "invalid request: method must be a non-empty string")
		}
		if p, ok := m["params"]; ok {
			if t := bytes.TrimSpace(p); len(t) == 0 || t[0] != '{' && t[0] != '[' {
				return frameError(id, codeInvalidRequest, "invalid request: params must be an object")
			}
		}
		return nil
	}
	// A response to a request of the server's: an id and a result or an
	// error, not both.
	_, hasResult := m["result"]
	_, hasError := m["error"]
	if !hasID || hasResult == hasError {
		return frameError(id, codeInvalidRequest, "invalid request: a frame needs a method (a request or notification), or an id with a result or an error (a response)")
	}
	return nil
}

// validID: a string, or an integer the SDK can hold. Null is refused, as
// MCP requires.
func validID(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		var s string
		return json.Unmarshal(raw, &s) == nil
	}
	var n int64
	return raw[0] != 'n' && json.Unmarshal(raw, &n) == nil
}

// frameError is one line: a JSON-RPC error response with id (null when
// the frame had none that could be read).
func frameError(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return append(b, '\n')
}

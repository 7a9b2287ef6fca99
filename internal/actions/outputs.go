package actions

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
)

// WriteOutputs appends outputs to the step's output file (GITHUB_OUTPUT) in
// the runner's heredoc form, which holds any value, newlines included:
//
//	name<<DELIMITER
//	value
//	DELIMITER
//
// The delimiter is random and checked to appear in no value, so a value
// cannot end its own entry early and set another output. Names are written
// in sorted order; empty values are skipped. A name with a newline or "<<"
// is refused.
//
// Reference: https://docs.github.com/actions/reference/workflow-commands-for-github-actions#multiline-strings
func WriteOutputs(path string, outputs map[string]string) error {
	if path == "" {
		return nil
	}
	names := make([]string, 0, len(outputs))
	for k, v := range outputs {
		if k == "" || strings.ContainsAny(k, "\r\n=") || strings.Contains(k, "<<") {
			return fmt.Errorf("write step outputs: invalid output name %q", k)
		}
		if v != "" {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	var buf bytes.Buffer
	for _, k := range names {
		v := outputs[k]
		delim, err := delimiterFor(v)
		if err != nil {
			return fmt.Errorf("write step outputs: %w", err)
		}
		fmt.Fprintf(&buf, "%s<<%s\n%s\n%s\n", k, delim, v, delim)
	}
	return appendFile(path, buf.Bytes(), "write step outputs (GITHUB_OUTPUT)")
}

// delimiterFor returns a random delimiter that does not occur in v.
func delimiterFor(v string) (string, error) {
	for range 8 {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("make delimiter: %w", err)
		}
		d := "ghadelimiter_" + hex.EncodeToString(b[:])
		if !strings.Contains(v, d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("make delimiter: every random delimiter occurs in the value")
}

// ReadOutputs parses a GITHUB_OUTPUT file as the runner does: "name=value"
// lines and "name<<DELIMITER" blocks. Later entries win. Tests and scripts
// use it to read what a step set.
func ReadOutputs(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read step outputs: %w", err)
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, len(b)+1)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		if name, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(name, "=") {
			var val []string
			closed := false
			for sc.Scan() {
				if sc.Text() == delim {
					closed = true
					break
				}
				val = append(val, sc.Text())
			}
			if !closed {
				return nil, fmt.Errorf("read step outputs: %s: no closing delimiter %q", name, delim)
			}
			out[name] = strings.Join(val, "\n")
			continue
		}
		name, val, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("read step outputs: malformed line %q", line)
		}
		out[name] = val
	}
	return out, sc.Err()
}

// AppendSummary appends markdown to the job summary file
// (GITHUB_STEP_SUMMARY), ending it with a newline.
func AppendSummary(path, markdown string) error {
	if path == "" {
		return nil
	}
	if !strings.HasSuffix(markdown, "\n") {
		markdown += "\n"
	}
	return appendFile(path, []byte(markdown), "write job summary (GITHUB_STEP_SUMMARY)")
}

// appendFile appends b to path in one write. The runner creates the file;
// ghonce only appends, so it never overwrites what other steps wrote.
func appendFile(path string, b []byte, what string) error {
	if len(b) == 0 {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if werr != nil {
		return fmt.Errorf("%s: %w", what, werr)
	}
	if cerr != nil {
		return fmt.Errorf("%s: %w", what, cerr)
	}
	return nil
}

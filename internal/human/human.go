// Package human formats values for people reading ghonce's messages:
// durations rounded to what a person can act on ("2s", "1m30s", "250ms"),
// ages for tables ("3m", "2h", "4d"), and help texts kept in files.
package human

import (
	"fmt"
	"strings"
	"time"
)

// Duration rounds d for a message: to the second from one second up
// ("2s", "1m30s", "2h0m0s" is shortened to "2h"), to the millisecond
// below ("250ms"). Zero and negative durations print as "0s".
func Duration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Millisecond:
		return "1ms"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	s := d.Round(time.Second).String()
	// time.Duration prints "2h0m0s" and "1m0s"; people write "2h", "1m".
	for _, z := range []string{"0s", "0m"} {
		if len(s) > len(z) && s[len(s)-len(z):] == z && (s[len(s)-len(z)-1] < '0' || s[len(s)-len(z)-1] > '9') {
			s = s[:len(s)-len(z)]
		}
	}
	return s
}

// Age is how long ago something happened, in its largest whole unit:
// "45s", "3m", "2h", "4d". A time in the future (a skewed clock) is "0s".
func Age(d time.Duration) string {
	switch {
	case d < time.Second:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

// Texts reads a file of help texts by name, as ghonce embeds them (a line
// "## NAME" starts a text, the lines under it are joined by spaces, lines
// starting with "# " are comments), and returns the text of a name. The
// file is part of the program: a name it lacks is a bug, and panics.
func Texts(file string) func(name string) string {
	texts := map[string]string{}
	var name string
	for _, line := range strings.Split(file, "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			name = strings.TrimSpace(line[3:])
		case strings.HasPrefix(line, "# "), name == "", strings.TrimSpace(line) == "":
		default:
			texts[name] = strings.TrimSpace(texts[name] + " " + strings.TrimSpace(line))
		}
	}
	return func(name string) string {
		t, ok := texts[name]
		if !ok {
			panic(fmt.Sprintf("no help text %q", name))
		}
		return t
	}
}

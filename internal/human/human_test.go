package human

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{-time.Second, "0s"},
		{400 * time.Microsecond, "1ms"},
		{25688245 * time.Nanosecond, "26ms"},
		{250 * time.Millisecond, "250ms"},
		{time.Second, "1s"},
		{1700 * time.Millisecond, "2s"},
		{90 * time.Second, "1m30s"},
		{time.Minute, "1m"},
		{2 * time.Hour, "2h"},
		{2*time.Hour + 30*time.Second, "2h0m30s"},
		{2*time.Hour + 5*time.Minute, "2h5m"},
	} {
		t.Run(tc.d.String(), func(t *testing.T) {
			if got := Duration(tc.d); got != tc.want {
				t.Errorf("Duration(%v) = %q, want %q", tc.d, got, tc.want)
			}
		})
	}
}

func TestAge(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Minute, "0s"},
		{45 * time.Second, "45s"},
		{3*time.Minute + 59*time.Second, "3m"},
		{2 * time.Hour, "2h"},
		{47 * time.Hour, "47h"},
		{4 * 24 * time.Hour, "4d"},
	} {
		t.Run(tc.d.String(), func(t *testing.T) {
			if got := Age(tc.d); got != tc.want {
				t.Errorf("Age(%v) = %q, want %q", tc.d, got, tc.want)
			}
		})
	}
}

func TestTexts(t *testing.T) {
	say := Texts("# a comment\n\n## one\nfirst line\nsecond line\n\n## two, with words\nonly\n")
	if one, two := say("one"), say("two, with words"); one != "first line second line" || two != "only" {
		t.Errorf("Texts: %q, %q", one, two)
	}
}

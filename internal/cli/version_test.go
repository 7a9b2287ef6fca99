package cli

import "testing"

func TestParseArchival(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct{ name, in, commit, tag string }{
		{"a checkout", "commit: $Format:%H$\ndescribe: $Format:%(describe:tags=true,match=v[0-9]*.[0-9]*.[0-9]*)$\n", "", ""},
		{"a release's tarball", "commit: " + sha + "\ndescribe: v1.2.3\n", sha, "v1.2.3"},
		{"past a release", "commit: " + sha + "\ndescribe: v1.2.3-4-g0123456\n", sha, "v1.2.3-4-g0123456"},
		{"no tag yet", "commit: " + sha + "\ndescribe: \n", sha, ""},
		{"a short commit", "commit: 0123\n", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if c, tag := parseArchival(tc.in); c != tc.commit || tag != tc.tag {
				t.Errorf("parseArchival(%q) = %q, %q; want %q, %q", tc.in, c, tag, tc.commit, tc.tag)
			}
		})
	}
}

func TestPseudoRevision(t *testing.T) {
	for in, want := range map[string]string{
		"v0.0.0-20261201170000-0123456789ab":              "0123456789ab",
		"v1.2.4-0.20261201170000-0123456789ab":            "0123456789ab",
		"v0.0.0-20261201170000-0123456789ab+incompatible": "0123456789ab",
		"v1.2.3":      "",
		"v1.2.3-rc.1": "",
		"(devel)":     "",
		"":            "",
	} {
		if got := pseudoRevision(in); got != want {
			t.Errorf("pseudoRevision(%q) = %q, want %q", in, got, want)
		}
	}
}

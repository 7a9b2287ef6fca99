package mcp

import (
	_ "embed"
	"fmt"
	"strings"
)

//go:embed model.txt
var modelFile string

// modelTexts are model.txt's texts by name: what the server tells a model
// of its tools and their task and step, and the guide says of them.
var modelTexts = parseTexts(modelFile)

// parseTexts reads texts in model.txt's shape: "## NAME" starts one, the
// lines under it are joined by spaces, "# " lines are comments.
func parseTexts(s string) map[string]string {
	texts := map[string]string{}
	var name string
	for _, line := range strings.Split(s, "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			name = strings.TrimSpace(line[3:])
		case strings.HasPrefix(line, "# "), name == "", strings.TrimSpace(line) == "":
		default:
			texts[name] = strings.TrimSpace(texts[name] + " " + strings.TrimSpace(line))
		}
	}
	return texts
}

// modelSays is the text model.txt calls name. model.txt is part of the
// program: a name it lacks is a bug, caught by the first test that lists
// the tools.
func modelSays(name string) string {
	t, ok := modelTexts[name]
	if !ok {
		panic(fmt.Sprintf("mcp: model.txt has no text %q", name))
	}
	return t
}

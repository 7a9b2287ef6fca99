package mcp

import (
	_ "embed"

	"github.com/ghonce/ghonce/internal/human"
)

//go:embed model.txt
var modelFile string

// modelSays is the text model.txt gives a name: what the server tells a
// model of its tools and their task and step, and the guide says of them.
var modelSays = human.Texts(modelFile)

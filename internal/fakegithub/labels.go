package fakegithub

import (
	"net/http"
	"slices"
	"strings"
)

func init() {
	handle(map[string]repoEndpoint{
		"GET /labels":           (*Server).listLabels,
		"POST /labels":          (*Server).createLabel,
		"GET /labels/{name}":    (*Server).getLabel,
		"PATCH /labels/{name}":  (*Server).editLabel,
		"DELETE /labels/{name}": (*Server).deleteLabel,
	})
}

const maxLabelDescription = 100

// labelByParam finds the label named by {name}, without case.
func labelByParam(c *call, rp *repo) *label { return rp.labelByName(c.params["name"]) }

func validColor(c string) bool { return len(c) == 6 && isHex(c) }

// checkLabel validates a label's fields as POST and PATCH .../labels do;
// self is the label being renamed (nil when creating).
func checkLabel(rp *repo, name, color, description *string, self *label) *reply {
	if name != nil {
		switch {
		case len([]rune(*name)) > maxLabelName:
			return validationFailed(apiError{Resource: "Label", Code: "custom", Field: "name", Message: "name is too long (maximum is 50 characters)"})
		case strings.TrimSpace(*name) == "":
			return validationFailed(apiError{Resource: "Label", Code: "missing_field", Field: "name"})
		}
		if l := rp.labelByName(*name); l != nil && l != self {
			return validationFailed(apiError{Resource: "Label", Code: "already_exists", Field: "name"})
		}
	}
	if color != nil && !validColor(*color) {
		return validationFailed(apiError{Resource: "Label", Code: "invalid", Field: "color"})
	}
	if description != nil && len([]rune(*description)) > maxLabelDescription {
		return validationFailed(apiError{Resource: "Label", Code: "custom", Field: "description", Message: "description is too long (maximum is 100 characters)"})
	}
	return nil
}

// listLabels serves GET /repos/{owner}/{repo}/labels, sorted by name.
func (s *Server) listLabels(c *call, rp *repo) *reply {
	return pageReply(s, c, repoLinkPath(c, rp), s.labelsJSON(rp, rp.labels))
}

// getLabel serves GET /repos/{owner}/{repo}/labels/{name} (name compared
// without case).
func (s *Server) getLabel(c *call, rp *repo) *reply {
	l := labelByParam(c, rp)
	if l == nil {
		return notFound()
	}
	return jsonReply(http.StatusOK, s.labelJSON(rp, l))
}

// createLabel serves POST /repos/{owner}/{repo}/labels. A name that exists
// (without case) is 422 already_exists; a name over 50 characters and a
// color that is not six hex digits are 422 too.
func (s *Server) createLabel(c *call, rp *repo) *reply {
	var in struct {
		Name        *string `json:"name"`
		Color       *string `json:"color"`
		Description *string `json:"description"`
	}
	if rep := decodeBody(c, &in); rep != nil {
		return rep
	}
	if in.Name == nil {
		return validationFailed(apiError{Resource: "Label", Code: "missing_field", Field: "name"})
	}
	if rep := checkLabel(rp, in.Name, in.Color, in.Description, nil); rep != nil {
		return rep
	}
	color, desc := "ededed", ""
	if in.Color != nil {
		color = *in.Color
	}
	if in.Description != nil {
		desc = *in.Description
	}
	l := s.addLabel(rp, *in.Name, color, desc, false)
	body := s.labelJSON(rp, l)
	return created(body.URL, body, &Commit{Kind: KindLabel, ID: l.id})
}

// editLabel serves PATCH /repos/{owner}/{repo}/labels/{name}: new_name,
// color, description.
func (s *Server) editLabel(c *call, rp *repo) *reply {
	l := labelByParam(c, rp)
	if l == nil {
		return notFound()
	}
	var in struct {
		NewName     *string `json:"new_name"`
		Color       *string `json:"color"`
		Description *string `json:"description"`
	}
	if rep := decodeBody(c, &in); rep != nil {
		return rep
	}
	if rep := checkLabel(rp, in.NewName, in.Color, in.Description, l); rep != nil {
		return rep
	}
	if in.NewName != nil {
		l.name = *in.NewName
		slices.SortStableFunc(rp.labels, func(a, b *label) int {
			return strings.Compare(strings.ToLower(a.name), strings.ToLower(b.name))
		})
	}
	if in.Color != nil {
		l.color = *in.Color
	}
	if in.Description != nil {
		l.description = *in.Description
	}
	return stored(http.StatusOK, s.labelJSON(rp, l), &Commit{Kind: KindLabel, ID: l.id})
}

// deleteLabel serves DELETE /repos/{owner}/{repo}/labels/{name}; the label
// leaves every issue and PR too.
func (s *Server) deleteLabel(c *call, rp *repo) *reply {
	l := labelByParam(c, rp)
	if l == nil {
		return notFound()
	}
	rp.labels = slices.DeleteFunc(rp.labels, func(x *label) bool { return x == l })
	for _, is := range rp.issues {
		is.labels = slices.DeleteFunc(is.labels, func(x *label) bool { return x == l })
	}
	return &reply{status: http.StatusNoContent, commit: &Commit{Kind: KindLabel, ID: l.id}}
}

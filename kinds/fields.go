package kinds

import (
	"reflect"
	"strings"
)

// DecodeValue is Decode's description as a value, not a pointer: what a
// front builds from the values a user gave it (its fields by JSON name).
func DecodeValue(kind string, payload []byte) (any, error) {
	s, err := Decode(kind, payload)
	if v := reflect.ValueOf(s); err == nil && v.Kind() == reflect.Pointer {
		s = v.Elem().Interface()
	}
	return s, err
}

// FieldTypes are the Go types of kind's fields, by JSON name: what a
// front parses a value given as text into (a number, a switch, a list).
func FieldTypes(kind string) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	s, err := DecodeValue(kind, []byte("{}"))
	if err != nil {
		return out
	}
	for f := range reflect.TypeOf(s).Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			out[name] = f.Type
		}
	}
	return out
}

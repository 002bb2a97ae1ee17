package config

import (
	"encoding/json"
	"errors"
	"reflect"
	"time"
)

// Duration is a time.Duration that reads from and writes to JSON as a Go
// duration string ("30s", "1m30s"). A JSON number (or any other non-string
// value) is an error; when decoded through encoding/json the error is a
// *json.UnmarshalTypeError, which encoding/json completes with the field name.
// A negative duration is an error. JSON null leaves the value unchanged.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalJSON encodes d as a duration string such as "1m30s".
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON decodes a duration string such as "30s".
func (d *Duration) UnmarshalJSON(data []byte) error {
	if rawKind(data) == "null" {
		return nil
	}
	var s string
	if rawKind(data) != "string" || json.Unmarshal(data, &s) != nil {
		return &json.UnmarshalTypeError{
			Value: rawKind(data),
			Type:  reflect.TypeFor[Duration](),
		}
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if v < 0 {
		return errors.New("duration must not be negative")
	}
	*d = Duration(v)
	return nil
}

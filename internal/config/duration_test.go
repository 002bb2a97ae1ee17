package config

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDurationJSON(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		out  string
	}{
		{`"30s"`, 30 * time.Second, `"30s"`},
		{`"1m30s"`, 90 * time.Second, `"1m30s"`},
		{`"90s"`, 90 * time.Second, `"1m30s"`},
		{`"0"`, 0, `"0s"`},
		{`"250ms"`, 250 * time.Millisecond, `"250ms"`},
		{`"2h"`, 2 * time.Hour, `"2h0m0s"`},
	} {
		var d Duration
		if err := json.Unmarshal([]byte(tt.in), &d); err != nil {
			t.Errorf("Unmarshal(%s): %v", tt.in, err)
			continue
		}
		if d.D() != tt.want {
			t.Errorf("Unmarshal(%s) = %v, want %v", tt.in, d.D(), tt.want)
		}
		out, err := json.Marshal(d)
		if err != nil || string(out) != tt.out {
			t.Errorf("Marshal(%v) = %s, %v, want %s", d.D(), out, err, tt.out)
		}
		var back Duration
		if err := json.Unmarshal(out, &back); err != nil || back != d {
			t.Errorf("round trip %s -> %s -> %v, %v", tt.in, out, back, err)
		}
	}

	// Round trip of a whole struct.
	in := Timeouts{Connect: Duration(time.Second), List: Duration(2 * time.Minute), Call: Duration(90 * time.Second)}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"connect":"1s","list":"2m0s","call":"1m30s"}` {
		t.Errorf("Marshal(Timeouts) = %s", b)
	}
	var out Timeouts
	if err := json.Unmarshal(b, &out); err != nil || out != in {
		t.Errorf("round trip = %+v, %v", out, err)
	}

	// null leaves the value unchanged.
	d := Duration(time.Second)
	if err := json.Unmarshal([]byte(`null`), &d); err != nil || d != Duration(time.Second) {
		t.Errorf("null: %v, %v", d, err)
	}

	// Errors: a number names the field; bad strings and negatives fail.
	for _, tt := range []struct{ in, want string }{
		{`{"call": 30}`, "call"},
		{`{"call": true}`, "call"},
		{`{"call": "30"}`, "missing unit"},
		{`{"call": "-1s"}`, "negative"},
		{`{"call": ""}`, "invalid duration"},
	} {
		var tm Timeouts
		err := json.Unmarshal([]byte(tt.in), &tm)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Unmarshal(%s) = %v, want error containing %q", tt.in, err, tt.want)
		}
	}
	var te *json.UnmarshalTypeError
	var tm Timeouts
	if err := json.Unmarshal([]byte(`{"call": 30}`), &tm); !errors.As(err, &te) || te.Field != "call" {
		t.Errorf("number error = %#v, want *json.UnmarshalTypeError with Field call", err)
	}
}

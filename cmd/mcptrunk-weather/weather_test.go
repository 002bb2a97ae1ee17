package main

import (
	"slices"
	"strings"
	"testing"
)

func TestForecastIsDeterministicAndPlausible(t *testing.T) {
	a, b := forecast("Lisbon", 7), forecast("LISBON", 7)
	if !slices.Equal(a, b) {
		t.Fatalf("forecast depends on case: %v vs %v", a, b)
	}
	if !slices.Equal(a[:3], forecast("Lisbon", 3)) {
		t.Fatal("a shorter forecast is not a prefix of a longer one")
	}
	for i, d := range a {
		if d.Low >= d.High || !slices.Contains(conditions, d.Condition) {
			t.Errorf("day %d implausible: %+v", i+1, d)
		}
	}
}

func TestFormatForecast(t *testing.T) {
	text := formatForecast("Oslo", forecast("Oslo", 2))
	if !strings.HasPrefix(text, "Forecast for Oslo, 2 day(s):\nday 1: ") || strings.Count(text, "\n") != 3 {
		t.Fatalf("unexpected text %q", text)
	}
}

func TestStationsIn(t *testing.T) {
	if got := stationsIn("amster"); len(got) != 2 {
		t.Errorf("stationsIn(amster) = %v", got)
	}
	if got := stationsIn("Atlantis"); got != nil {
		t.Errorf("stationsIn(Atlantis) = %v", got)
	}
}

func TestForecastURIEscapesLikeRFC6570(t *testing.T) {
	if got, want := forecastURI("São Paulo"), "weather://forecast/S%C3%A3o%20Paulo"; got != want {
		t.Errorf("forecastURI = %q, want %q", got, want)
	}
	if got, want := forecastURI("a+b/c~d"), "weather://forecast/a%2Bb%2Fc~d"; got != want {
		t.Errorf("forecastURI = %q, want %q", got, want)
	}
}

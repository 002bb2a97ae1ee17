package main

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// station is a made-up weather station. The list is fixed so that demo
// output and test expectations never change.
type station struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	City string `json:"city"`
}

var stations = []station{
	{ID: "AMS-1", Name: "Amsterdam Schiphol", City: "Amsterdam"},
	{ID: "AMS-2", Name: "Amsterdam Centrum", City: "Amsterdam"},
	{ID: "BER-1", Name: "Berlin Tempelhof", City: "Berlin"},
	{ID: "LIS-1", Name: "Lisbon Portela", City: "Lisbon"},
	{ID: "NBO-1", Name: "Nairobi Dagoretti", City: "Nairobi"},
	{ID: "OSL-1", Name: "Oslo Blindern", City: "Oslo"},
	{ID: "TYO-1", Name: "Tokyo Otemachi", City: "Tokyo"},
}

// stationsIn returns the stations whose city contains city, ignoring case.
func stationsIn(city string) []station {
	var found []station
	for _, s := range stations {
		if strings.Contains(strings.ToLower(s.City), strings.ToLower(city)) {
			found = append(found, s)
		}
	}
	return found
}

// day is one day of a forecast.
type day struct {
	Condition string
	High, Low int // °C
}

var conditions = []string{"sunny", "cloudy", "rain", "showers", "windy", "fog"}

// forecast invents the weather for city: the same city and day always give
// the same answer, so tests can assert on it, and any city name works.
func forecast(city string, days int) []day {
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(city)))
	seed := h.Sum32()
	out := make([]day, days)
	for i := range out {
		x := seed ^ uint32(i+1)*2654435761 // Knuth's multiplicative hash spreads consecutive days
		high := 5 + int(x>>8%25)
		out[i] = day{Condition: conditions[x%uint32(len(conditions))], High: high, Low: high - 3 - int(x>>16%6)}
	}
	return out
}

// formatForecast renders a forecast as the text the forecast tool and the
// weather://forecast/{city} template return.
func formatForecast(city string, days []day) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Forecast for %s, %d day(s):\n", city, len(days))
	for i, d := range days {
		fmt.Fprintf(&b, "day %d: %s, high %d°C, low %d°C\n", i+1, d.Condition, d.High, d.Low)
	}
	return b.String()
}

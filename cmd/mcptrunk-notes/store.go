package main

import (
	"strconv"
	"strings"
	"sync"
)

// note is one entry of the in-memory notebook.
type note struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Body  string `json:"body"`
}

// text is how a note reads when returned by get_note or notes://note/{id}; both
// share it so tests can compare the tool and the resource byte for byte.
func (n note) text() string {
	return n.Title + "\n\n" + n.Body
}

// noteRef is the part of a note that search reports.
type noteRef struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// store holds the notes. Tool calls run on several stdio workers at once, so
// every access takes the lock.
type store struct {
	mu    sync.RWMutex
	notes []note // in id order; ids are never reused
	next  int
}

// newStore returns a store seeded with notes "1", "2" and "3", so that every
// run of the demo and the tests sees the same starting data.
func newStore() *store {
	return &store{
		notes: []note{
			{ID: "1", Title: "Shopping list", Body: "Milk, eggs, bread and coffee beans."},
			{ID: "2", Title: "Meeting notes", Body: "Proxy roadmap: namespacing, fan-out and result caching."},
			{ID: "3", Title: "Ideas", Body: "A weather server that never needs the network."},
		},
		next: 4,
	}
}

// add stores a new note and returns its id.
func (s *store) add(title, body string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := strconv.Itoa(s.next)
	s.next++
	s.notes = append(s.notes, note{ID: id, Title: title, Body: body})
	return id
}

// get returns the note with the given id.
func (s *store) get(id string) (note, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, n := range s.notes {
		if n.ID == id {
			return n, true
		}
	}
	return note{}, false
}

// all returns a copy of every note in id order.
func (s *store) all() []note {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]note(nil), s.notes...)
}

// search returns the notes whose title or body contains query, ignoring case.
// The result is never nil, so structuredContent always carries an array.
func (s *store) search(query string) []noteRef {
	q := strings.ToLower(query)
	matches := []noteRef{}
	for _, n := range s.all() {
		if strings.Contains(strings.ToLower(n.Title), q) || strings.Contains(strings.ToLower(n.Body), q) {
			matches = append(matches, noteRef{ID: n.ID, Title: n.Title})
		}
	}
	return matches
}

package testkit

// LabelSink is a jsonrpc.LabelWriter for tests: it keeps each message
// written with its label ("-" for a message written without one).
type LabelSink chan [2]string

// WriteMessage keeps msg without a label.
func (s LabelSink) WriteMessage(msg []byte) error {
	s <- [2]string{"-", string(msg)}
	return nil
}

// WriteLabelled keeps msg with label.
func (s LabelSink) WriteLabelled(msg []byte, label string) error {
	s <- [2]string{label, string(msg)}
	return nil
}

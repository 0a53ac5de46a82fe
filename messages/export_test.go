package messages

// Exported for the tests of package messages_test.
var (
	ToChat   = toChat
	Validate = validate
)

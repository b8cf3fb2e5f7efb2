"""Fast numeric evaluation of the generated code on N samples."""

a-number: 5

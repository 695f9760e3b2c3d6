-- what the main chunk returns is not printed
return 1, "two"

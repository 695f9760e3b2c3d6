return "found in sub/"

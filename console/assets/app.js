// placeholder: the UI replaces this file

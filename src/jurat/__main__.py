from jurat.cli import main

main()

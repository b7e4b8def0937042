from deftly.cli.app import main

main()

from deskmate.app.cli import main

main()

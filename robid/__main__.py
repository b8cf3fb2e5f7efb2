from robid.cli import main

raise SystemExit(main())

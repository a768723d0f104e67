#!/usr/bin/python3
"""Generate assay's sample data sets, deterministically.

    /usr/bin/python3 sample-data/generate.py [OUT_DIR]

Writes into OUT_DIR (default: the folder this file is in):

  building_energy.csv        hourly meter readings of an office building, 2024
  building_energy.truth.json the events injected into it (ground truth)
  customers-1000.csv         1000 synthetic customer records

Standard library only, fixed seeds: re-running gives byte-identical files.
Floats are written with fixed decimals, so output does not depend on the
platform's float printing.
"""

import csv
import datetime as dt
import json
import math
import os
import random
import sys

SEED_ENERGY = 20240101
SEED_CUSTOMERS = 1000

YEAR = 2024
START = dt.datetime(YEAR, 1, 1, 0, 0)
HOURS = 8784  # 2024 is a leap year; local standard time, no DST shift

TS_FMT = "%Y-%m-%d %H:%M"

# ---------------------------------------------------------------------------
# Injected events (times are inclusive, hourly). Every one is far outside
# the noise, except the heat wave, which is a weather event whose extra
# energy use is fully explained by the cooling load.
# ---------------------------------------------------------------------------
EV_WEEKEND_START = dt.datetime(2024, 3, 16, 0)    # Saturday
EV_WEEKEND_END = dt.datetime(2024, 3, 17, 23)     # Sunday
EV_SPIKE = dt.datetime(2024, 5, 8, 14)            # Wednesday
EV_HEAT_START = dt.datetime(2024, 7, 22, 0)       # Monday
EV_HEAT_END = dt.datetime(2024, 7, 28, 23)        # Sunday
EV_DROPOUT_START = dt.datetime(2024, 10, 2, 9)    # Wednesday
EV_DROPOUT_END = dt.datetime(2024, 10, 2, 14)
EV_BASELOAD_START = dt.datetime(2024, 11, 19, 0)  # Tuesday
EV_BASELOAD_END = dt.datetime(2024, 11, 22, 23)   # Friday

HEAT_WAVE_PEAK_C = 12.0   # added to the temperature at the plateau
SPIKE_FACTOR = 2.6        # the spike hour is this many times the normal value
BASELOAD_STEP_KWH = 30.0  # added to every hour of the baseload step


def ts(t):
    return t.strftime(TS_FMT)


def truth_events():
    return [
        {
            "id": "E1",
            "kind": "equipment_left_on",
            "start": ts(EV_WEEKEND_START),
            "end": ts(EV_WEEKEND_END),
            "anomaly": True,
            "description": "Whole weekend (Sat-Sun) at near weekday-daytime "
                           "level, nights included: lighting, plug loads and "
                           "HVAC left running after Friday.",
        },
        {
            "id": "E2",
            "kind": "spike",
            "start": ts(EV_SPIKE),
            "end": ts(EV_SPIKE),
            "anomaly": True,
            "description": "Single hour at %.1fx the normal consumption for "
                           "that hour (weekday afternoon)." % SPIKE_FACTOR,
        },
        {
            "id": "E3",
            "kind": "heat_wave_explained",
            "start": ts(EV_HEAT_START),
            "end": ts(EV_HEAT_END),
            "anomaly": False,
            "description": "Heat wave: outdoor temperature up to about "
                           "%.0f C above normal; energy use is high but "
                           "follows the usual cooling response to "
                           "temperature. Not an anomaly." % HEAT_WAVE_PEAK_C,
        },
        {
            "id": "E4",
            "kind": "meter_dropout",
            "start": ts(EV_DROPOUT_START),
            "end": ts(EV_DROPOUT_END),
            "anomaly": True,
            "description": "Meter dropout: energy_kwh is empty (missing) for "
                           "these consecutive hours; outdoor_temp_c is "
                           "still present.",
        },
        {
            "id": "E5",
            "kind": "baseload_step",
            "start": ts(EV_BASELOAD_START),
            "end": ts(EV_BASELOAD_END),
            "anomaly": True,
            "description": "Base load raised by %.0f kWh in every hour, day "
                           "and night, for four days (a pump or heater stuck "
                           "on)." % BASELOAD_STEP_KWH,
        },
    ]


# ---------------------------------------------------------------------------
# Weather
# ---------------------------------------------------------------------------
def smoothstep(x):
    x = min(1.0, max(0.0, x))
    return x * x * (3.0 - 2.0 * x)


def heat_wave_bump(t):
    """Extra degrees C: ramps up over the first day, plateau, ramps down
    over the last day."""
    if t < EV_HEAT_START or t > EV_HEAT_END:
        return 0.0
    h_from_start = (t - EV_HEAT_START).total_seconds() / 3600.0
    h_to_end = (EV_HEAT_END - t).total_seconds() / 3600.0
    ramp = min(smoothstep(h_from_start / 14.0), smoothstep(h_to_end / 14.0))
    return HEAT_WAVE_PEAK_C * ramp


def outdoor_temperatures(rng):
    ndays = HOURS // 24
    # Day-to-day weather: AR(1) anomaly, stationary sd about 2.4 C.
    phi = 0.72
    sd = 2.4
    daily = []
    x = 0.0
    for _ in range(ndays + 2):
        x = phi * x + rng.gauss(0.0, sd * math.sqrt(1.0 - phi * phi))
        daily.append(x)
    temps = []
    e = 0.0
    for i in range(HOURS):
        t = START + dt.timedelta(hours=i)
        doy = i / 24.0
        hod = t.hour
        # Seasonal: coldest around 20 Jan (~1.5 C mean), warmest ~21 Jul (~19.5 C).
        seasonal = 10.5 - 9.0 * math.cos(2.0 * math.pi * (doy - 20.0) / 366.0)
        # Diurnal: larger swing in summer; min ~03:00, max ~15:00.
        amp = 3.6 - 1.4 * math.cos(2.0 * math.pi * (doy - 20.0) / 366.0)
        diurnal = amp * math.cos(2.0 * math.pi * (hod - 15) / 24.0)
        # Weather anomaly, interpolated between daily values placed at noon.
        pos = doy - 0.5 + 1.0
        k = int(math.floor(pos))
        f = pos - k
        weather = daily[k] * (1.0 - f) + daily[k + 1] * f
        # Hour-to-hour noise.
        e = 0.6 * e + rng.gauss(0.0, 0.35)
        temps.append(seasonal + diurnal + weather + e + heat_wave_bump(t))
    return temps


# ---------------------------------------------------------------------------
# Building
# ---------------------------------------------------------------------------
# Occupancy by hour of day on a working day (lights, plug loads, people).
WEEKDAY_OCC = [0, 0, 0, 0, 0, 0, 0.25, 0.7, 0.95, 1.0, 1.0, 1.0,
               0.95, 1.0, 1.0, 1.0, 0.95, 0.8, 0.5, 0.25, 0.1, 0, 0, 0]
SATURDAY_OCC = [0] * 9 + [0.08] * 5 + [0] * 10


def occupancy(t):
    wd = t.weekday()
    if wd < 5:
        return WEEKDAY_OCC[t.hour]
    if wd == 5:
        return SATURDAY_OCC[t.hour]
    return 0.0


def hvac_on(t):
    return t.weekday() < 5 and 6 <= t.hour <= 19


BASE_KWH = 38.0          # servers, fridges, emergency lighting, ventilation
OCC_KWH = 95.0           # full-occupancy lights and plug loads
HEAT_BAL_C = 15.0        # heating balance point
COOL_BAL_C = 19.0        # cooling balance point
HEAT_ON, HEAT_OFF = 4.0, 1.0   # kWh per degree-hour, HVAC schedule on / off
COOL_ON, COOL_OFF = 5.2, 0.9


def expected_energy(t, temp, occ, hvac):
    heat = max(0.0, HEAT_BAL_C - temp) * (HEAT_ON if hvac else HEAT_OFF)
    cool = max(0.0, temp - COOL_BAL_C) * (COOL_ON if hvac else COOL_OFF)
    return BASE_KWH + OCC_KWH * occ + heat + cool


def building_energy(rng, temps):
    rows = []
    m = 0.0
    for i in range(HOURS):
        t = START + dt.timedelta(hours=i)
        temp = temps[i]
        occ = occupancy(t)
        hvac = hvac_on(t)
        if EV_WEEKEND_START <= t <= EV_WEEKEND_END:
            # Left running: weekday daytime plant, lights at most of the
            # usual level, all weekend long.
            occ = 0.85
            hvac = True
        energy = expected_energy(t, temp, occ, hvac)
        if EV_BASELOAD_START <= t <= EV_BASELOAD_END:
            energy += BASELOAD_STEP_KWH
        # Noise: slowly varying multiplicative part + additive meter noise.
        m = 0.5 * m + rng.gauss(0.0, 0.026)
        energy = energy * math.exp(m) + rng.gauss(0.0, 1.6)
        if t == EV_SPIKE:
            energy *= SPIKE_FACTOR
        if EV_DROPOUT_START <= t <= EV_DROPOUT_END:
            e_str = ""
        else:
            e_str = "%.2f" % max(0.0, energy)
        rows.append((ts(t), e_str, "%.1f" % temp))
    return rows


def write_energy(out_dir):
    rng = random.Random(SEED_ENERGY)
    temps = outdoor_temperatures(rng)
    rows = building_energy(rng, temps)
    path = os.path.join(out_dir, "building_energy.csv")
    with open(path, "w", newline="") as f:
        f.write("timestamp,energy_kwh,outdoor_temp_c\n")
        for r in rows:
            f.write(",".join(r) + "\n")
    truth = {
        "file": "building_energy.csv",
        "rows": HOURS,
        "timestamp_format": "YYYY-MM-DD HH:MM, hourly, local standard time",
        "missing_values": "empty energy_kwh field",
        "events": truth_events(),
    }
    with open(os.path.join(out_dir, "building_energy.truth.json"), "w") as f:
        json.dump(truth, f, indent=2)
        f.write("\n")


# ---------------------------------------------------------------------------
# Customers
# ---------------------------------------------------------------------------
FIRST = """Aaron Abigail Adam Adriana Aiden Alan Albert Alexa Alice Alicia Allen
Alyssa Amanda Amber Amy Andre Andrea Angela Anita Ann Anthony Antonio Ariana
Arthur Ashley Audrey Austin Barbara Barry Becky Ben Bernard Beth Bianca Bill
Blake Bobby Bonnie Brad Brandon Brenda Brent Brett Brian Brittany Brooke Bruce
Bryan Caitlin Calvin Cameron Candice Carl Carla Carlos Carmen Carol Carrie
Casey Cassandra Catherine Cesar Chad Charles Chelsea Cheryl Chris Christian
Christina Cindy Claire Clarence Claudia Clayton Cody Colin Colleen Connor
Corey Courtney Craig Crystal Curtis Cynthia Dakota Dale Dalton Dana Daniel
Danielle Darius Darren Dave Dawn Dean Debbie Deborah Denise Derek Desiree
Devin Diana Diane Dominic Donald Donna Dorothy Douglas Drew Dustin Dwayne
Dylan Ebony Eddie Edgar Edward Edwin Eileen Elaine Elijah Elizabeth Ellen
Emily Emma Eric Erica Erik Erin Ernest Ethan Eugene Evan Faith Felicia
Francisco Frank Gabriel Gail Garrett Gary Gavin Gene Geoffrey George Gerald
Gina Glen Gloria Grace Grant Greg Gregory Hailey Haley Hannah Harold Heather
Heidi Helen Henry Holly Howard Hunter Ian Isaac Jack Jacob Jacqueline Jaime
Jake James Jamie Janet Janice Jared Jasmine Jason Jeff Jeffrey Jenna Jennifer
Jeremy Jerry Jesse Jessica Jill Jim Joan Joanna Jodi Joe Joel John Johnny
Jon Jonathan Jordan Jose Joseph Joshua Joy Juan Judith Julia Julie Justin
Kara Karen Kari Karl Kate Katherine Kathleen Kathy Katie Kayla Keith Kelly
Kelsey Ken Kendra Kenneth Kerry Kevin Kim Kimberly Kirk Krista Kristen Kristin
Kurt Kyle Lance Larry Laura Lauren Leah Lee Leonard Leslie Levi Linda Lindsay
Lisa Logan Lori Louis Lucas Luis Luke Lynn Madison Malik Mallory Marc Marcus
Margaret Maria Mario Marissa Mark Martin Marvin Mary Mason Matthew Maurice
Meagan Megan Melanie Melinda Melissa Micheal Michelle Miguel Mike Mindy
Miranda Misty Mitchell Molly Monica Morgan Nancy Natalie Nathan Neil Nicholas
Nicole Noah Nora Norman Olivia Omar Oscar Paige Pam Patricia Patrick Paul
Paula Peggy Penny Peter Phillip Preston Priscilla Rachel Ralph Randall Randy
Raymond Rebecca Regina Renee Rhonda Ricardo Richard Ricky Riley Robert Robin
Rodney Roger Ronald Ross Roy Russell Ruth Ryan Sabrina Sally Samantha Samuel
Sandra Sara Scott Sean Selena Seth Shane Shannon Sharon Shawn Sheila Shelby
Sherri Sierra Sonya Spencer Stacy Stanley Stephanie Stephen Steve Sue Summer
Susan Suzanne Sydney Tamara Tammy Tanya Tara Taylor Teresa Terrence Terry
Theresa Thomas Tiffany Timothy Tina Todd Tom Tommy Tony Tracey Tracy Travis
Trevor Troy Tyler Valerie Vanessa Vernon Veronica Vickie Victor Vincent
Virginia Walter Wanda Wayne Wendy Whitney William Willie Xavier Yolanda
Zachary Zoe""".split()

LAST = """Abbott Acevedo Acosta Adams Adkins Aguilar Aguirre Alexander Ali
Allen Alvarado Alvarez Andersen Anderson Andrade Andrews Archer Arellano Arias
Armstrong Arnold Arroyo Atkins Avery Ayala Bailey Baird Baker Baldwin Ball
Ballard Banks Barajas Barber Barker Barnes Barnett Barr Barrett Barron Barry
Bartlett Barton Bass Bates Bauer Baxter Beard Beasley Beck Becker Bell Beltran
Benitez Benjamin Bennett Benson Berg Berger Bernard Best Bishop Black Blackburn
Blackwell Blair Blake Blanchard Bolton Bond Booker Boone Booth Bowen Bowers
Bowman Boyd Boyer Boyle Bradford Bradley Bradshaw Brady Branch Brandt Bray
Brennan Brewer Bridges Briggs Brock Brooks Browning Bruce Bryan Bryant
Buchanan Buck Buckley Bullock Burch Burgess Burke Burnett Burns Burton Bush
Butler Byrd Cabrera Cain Calderon Calhoun Callahan Camacho Cameron Campbell
Cannon Cantrell Cantu Cardenas Carey Carlson Carpenter Carr Carrillo Carroll
Carson Carter Case Castaneda Castillo Castro Chambers Chan Chandler Chang
Chapman Charles Chase Chavez Chen Cherry Choi Christensen Church Clark Clarke
Clay Clayton Clements Cline Cobb Cochran Coffey Cohen Cole Coleman Collier
Collins Colon Combs Compton Conley Conner Conrad Contreras Conway Cook Cooke
Cooley Cooper Copeland Cortez Costa Cowan Cox Craig Crane Crawford Cross Cruz
Cummings Cunningham Curry Curtis Dalton Daniel Daniels Daugherty Davenport
David Davidson Davies Davila Dawson Day Dean Decker Delacruz Deleon Delgado
Dennis Diaz Dickerson Dickson Dillon Dixon Dodson Dominguez Donaldson Donovan
Dorsey Dougherty Douglas Downs Doyle Drake Duarte Dudley Duffy Duke Duncan
Dunlap Dunn Duran Durham Dyer Eaton Edwards Elliott Ellis Ellison Erickson
Espinoza Estes Estrada Evans Everett Farley Farmer Farrell Faulkner Ferguson
Fernandez Ferrell Fields Figueroa Finley Fischer Fisher Fitzgerald Fleming
Fletcher Flores Flowers Floyd Flynn Foley Forbes Ford Foster Fowler Fox
Francis Franco Frank Franklin Frazier Frederick Freeman French Frey Friedman
Fritz Frost Fuentes Fuller Gaines Gallagher Gallegos Galloway Gamble Garcia
Gardner Garner Garrett Garrison Garza Gates Gay Gentry George Gibbs Gibson
Gilbert Giles Gill Gillespie Gilmore Glass Glenn Glover Golden Gomez Gonzales
Good Goodman Goodwin Gordon Gould Graham Grant Graves Gray Green Greene Greer
Gregory Griffin Griffith Grimes Gross Guerra Guerrero Gutierrez Guzman Haas
Hahn Hale Haley Hall Hamilton Hammond Hampton Hancock Hanna Hansen Hanson
Hardin Harding Hardy Harmon Harper Harrell Harrington Harris Harrison Hart
Hartman Harvey Hatfield Hawkins Hayden Hayes Haynes Hays Heath Hebert Henderson
Hendricks Henry Hensley Henson Herman Hernandez Herrera Herring Hess Hester
Hickman Hicks Higgins Hill Hines Hinton Hobbs Hodge Hodges Hoffman Hogan
Holland Holloway Holmes Holt Hood Hooper Hopkins Horn Horne Horton House
Houston Howard Howe Howell Huang Hubbard Huber Hudson Huerta Huff Huffman
Hughes Hull Humphrey Hunt Hunter Hurley Hurst Hutchinson Ibarra Ingram Irwin
Jackson Jacobs Jacobson James Jarvis Jefferson Jenkins Jennings Jensen
Johnston Jones Jordan Joseph Joyce Juarez Kaiser Kane Kaufman Keith Keller
Kelley Kemp Kennedy Kent Kerr Key Khan Kidd Kim King Kirby Kirk Klein Knapp
Knight Knox Koch Kramer Krause Krueger Lam Lamb Lambert Landry Lane Lang
Lara Larsen Larson Lawrence Lawson Le Leach Leblanc Lee Leon Leonard Lester
Levine Levy Lewis Li Lin Lindsey Little Livingston Lloyd Logan Long Lopez
Love Lowe Lowery Lucas Luna Lynch Lynn Lyons Macdonald Macias Mack Madden
Maddox Mahoney Maldonado Malone Mann Manning Marks Marquez Marsh Marshall
Martin Martinez Mason Massey Mata Mathews Mathis Matthews Maxwell May Mayer
Maynard Mayo Mays Mcbride Mccall Mccann Mccarthy Mccarty Mcclain Mcclure
Mcconnell Mccormick Mccoy Mccullough Mcdaniel Mcdonald Mcdowell Mcfarland
Mcgee Mcgrath Mcguire Mcintosh Mcintyre Mckay Mckee Mckenzie Mckinney Mclean
Mcmahon Mcmillan Mcpherson Meadows Medina Mejia Melendez Melton Mendez Mendoza
Mercer Merritt Meyer Meyers Meza Michael Middleton Miles Miller Mills Miranda
Mitchell Molina Monroe Montes Montgomery Montoya Moody Moon Mooney Moore
Morales Moran Moreno Morgan Morris Morrison Morrow Morse Morton Moses Mosley
Moss Mueller Mullen Mullins Munoz Murillo Murphy Murray Myers Nash Navarro
Neal Nelson Newman Newton Nguyen Nichols Nicholson Nielsen Nixon Noble Nolan
Norman Norris Norton Novak Nunez Obrien Ochoa Oconnor Odom Olsen Olson Oneal
Oneill Orozco Orr Ortega Ortiz Osborne Owen Owens Pace Pacheco Padilla Page
Palmer Park Parker Parks Parrish Parsons Patel Patrick Patterson Patton Paul
Payne Pearson Peck Pena Pennington Perez Perkins Perry Peters Petersen
Peterson Petty Pham Phelps Phillips Pierce Pineda Pittman Pitts Pollard
Ponce Poole Pope Porter Potter Powell Powers Pratt Preston Price Pruitt
Pugh Quinn Ramirez Ramos Ramsey Randall Randolph Rangel Rasmussen Ray Raymond
Reed Reese Reeves Reid Reilly Reyes Reynolds Rhodes Rice Rich Richard Richards
Richardson Richmond Riddle Riggs Riley Rios Rivas Rivera Roach Robbins Roberson
Roberts Robertson Robinson Robles Rocha Rodgers Rodriguez Rogers Rojas Rollins
Roman Romero Rosales Rosario Ross Roth Rowe Rowland Roy Rubio Ruiz Rush
Russell Russo Ryan Salas Salazar Salinas Sampson Sanchez Sanders Sandoval
Santana Santiago Santos Saunders Savage Sawyer Schaefer Schmidt Schmitt
Schneider Schroeder Schultz Schwartz Scott Sellers Serrano Sexton Shaffer
Shah Shannon Sharp Shaw Shea Shelton Shepard Shepherd Sheppard Sherman
Shields Short Silva Simmons Simon Simpson Sims Singh Skinner Sloan Small
Smith Snow Snyder Solis Solomon Sosa Soto Sparks Spears Spence Spencer Stafford
Stanley Stanton Stark Steele Stein Stephens Stephenson Stevens Stevenson
Stewart Stokes Stone Stout Strickland Strong Stuart Suarez Sullivan Summers
Sutton Swanson Sweeney Tanner Tapia Tate Taylor Terrell Terry Thomas Thompson
Thornton Todd Torres Townsend Tran Travis Trevino Trujillo Tucker Turner
Tyler Underwood Valdez Valencia Valentine Valenzuela Vance Vang Vargas
Vasquez Vaughan Vaughn Vazquez Vega Velasquez Velazquez Villa Villanueva
Vincent Wade Wagner Walker Wall Wallace Waller Walls Walsh Walter Walters
Walton Ward Ware Warner Warren Washington Waters Watkins Watson Watts Weaver
Webb Weber Webster Weeks Welch Wells West Wheeler Whitaker White Whitehead
Whitney Wiggins Wilcox Wiley Wilkerson Wilkins Wilkinson Williams Williamson
Willis Wilson Winters Wise Wolf Wolfe Wong Wood Woodard Woods Woodward Wright
Wu Wyatt Yang Yates Yoder York Young Yu Zamora Zhang Zimmerman Zuniga""".split()

COMPANY_SUFFIX = ["Group", "Inc", "LLC", "Ltd", "PLC", "and Sons", "Partners",
                  "Holdings", "Co", "Associates"]

CITIES = """Acevedoville|Alvarezport|Anthonyborough|Bakerton|Barnesmouth|
Bellside|Bennettchester|Brownfurt|Carterberg|Castilloview|Chavezhaven|
Clarkstad|Collinsville|Cooperport|Cruzbury|Daviston|Diazmouth|East Adam|
East Brittany|East Cindy|East Derek|East Jacob|East Linda|East Patrick|
Edwardsfort|Evansberg|Flemingmouth|Floresmouth|Garciaside|Gomezland|
Gonzalezton|Greenfurt|Hallport|Harrisview|Hernandezburgh|Hillberg|Howardside|
Hughesville|Jacksonmouth|Jamesbury|Johnsonfort|Jonesview|Kellyland|Kingstad|
Lake Amanda|Lake Brian|Lake Carla|Lake Dustin|Lake Heather|Lake Jeffrey|
Lake Kimberly|Lake Monica|Lake Ryan|Lake Tyler|Leeside|Lewisburgh|Lopezton|
Martinezberg|Martinfort|Millerstad|Mitchellport|Moorechester|Moralesview|
Morganville|Morrismouth|Murphyside|Nelsonburgh|New Andrew|New Brandon|
New Cheryl|New Emily|New Gabriel|New Jessica|New Lisa|New Michael|New Paula|
New Teresa|North Amy|North Bryan|North Dawn|North Diana|North Gary|
North Jennifer|North Kevin|North Laura|North Rachel|Parkerport|Perezfort|
Perryberg|Phillipsbury|Port Aaron|Port Bobby|Port Donna|Port Jessica|
Port Joshua|Port Kayla|Port Lauren|Port Mark|Port Nathan|Port Scott|
Ramirezhaven|Reedmouth|Reyesfurt|Richardsonside|Riveraton|Robertsberg|
Robinsonland|Rodriguezview|Rogersville|Ross|Sanchezborough|Sandersmouth|
Scottfort|Smithburgh|South Alexis|South Cassandra|South Eric|South Henry|
South Julie|South Kristen|South Mario|South Nicole|South Sandra|South Travis|
Stewartfurt|Taylorport|Thomasberg|Thompsonview|Torresmouth|Turnerside|
Walkerport|Wardville|Watsonhaven|West Alicia|West Brenda|West Christopher|
West Daniel|West Erica|West Gregory|West Jordan|West Maria|West Samantha|
West Timothy|Whiteborough|Williamsfurt|Wilsonland|Woodsmouth|Wrightstad|
Youngberg""".replace("\n", "").split("|")

COUNTRIES = """Afghanistan|Albania|Algeria|Andorra|Angola|Argentina|Armenia|
Australia|Austria|Azerbaijan|Bahamas|Bahrain|Bangladesh|Barbados|Belarus|
Belgium|Belize|Benin|Bhutan|Bolivia|Bosnia and Herzegovina|Botswana|Brazil|
Bulgaria|Burkina Faso|Burundi|Cambodia|Cameroon|Canada|Cape Verde|Chad|Chile|
China|Colombia|Comoros|Congo|Costa Rica|Cote d'Ivoire|Croatia|Cuba|Cyprus|
Czech Republic|Denmark|Djibouti|Dominica|Dominican Republic|Ecuador|Egypt|
El Salvador|Eritrea|Estonia|Ethiopia|Fiji|Finland|France|Gabon|Gambia|
Georgia|Germany|Ghana|Greece|Grenada|Guatemala|Guinea|Guyana|Haiti|Honduras|
Hungary|Iceland|India|Indonesia|Iran|Iraq|Ireland|Israel|Italy|Jamaica|Japan|
Jordan|Kazakhstan|Kenya|Kiribati|"Korea, Republic of"|Kuwait|Latvia|Lebanon|
Lesotho|Liberia|Libya|Liechtenstein|Lithuania|Luxembourg|Madagascar|Malawi|
Malaysia|Maldives|Mali|Malta|Mauritania|Mauritius|Mexico|Moldova|Monaco|
Mongolia|Montenegro|Morocco|Mozambique|Namibia|Nepal|Netherlands|New Zealand|
Nicaragua|Niger|Nigeria|Norway|Oman|Pakistan|Palau|Panama|Paraguay|Peru|
Philippines|Poland|Portugal|Qatar|Romania|Russian Federation|Rwanda|Samoa|
San Marino|Saudi Arabia|Senegal|Serbia|Seychelles|Sierra Leone|Singapore|
Slovakia|Slovenia|Somalia|South Africa|Spain|Sri Lanka|Sudan|Suriname|Sweden|
Switzerland|Tajikistan|Tanzania|Thailand|Togo|Tonga|Tunisia|Turkey|
Turkmenistan|Uganda|Ukraine|United Arab Emirates|United Kingdom|
United States of America|Uruguay|Uzbekistan|Vanuatu|Venezuela|Vietnam|
"Virgin Islands, British"|Yemen|Zambia|Zimbabwe""".replace("\n", "") \
    .replace('"', "").split("|")

EMAIL_DOMAINS = ["gmail.com", "yahoo.com", "hotmail.com", "outlook.com",
                 "mail.com", "proton.me", "icloud.com", "fastmail.com"]
TLDS = ["com", "com", "com", "net", "org", "info", "biz", "io"]


def slug(s):
    return "".join(c for c in s.lower() if c.isalnum())


def company_name(rng):
    r = rng.random()
    a, b, c = (rng.choice(LAST) for _ in range(3))
    if r < 0.35:
        return "%s, %s and %s" % (a, b, c)
    if r < 0.5:
        return "%s-%s" % (a, b)
    if r < 0.62:
        return "%s and %s" % (a, b)
    if r < 0.72:
        return "%s, %s" % (a, rng.choice(["Inc", "LLC", "Ltd"]))
    return "%s %s" % (a, rng.choice(COMPANY_SUFFIX))


def phone(rng):
    d = lambda n: "".join(str(rng.randrange(10)) for _ in range(n))
    area = str(rng.randrange(2, 10)) + d(2)
    kind = rng.randrange(6)
    if kind == 0:
        p = "%s-%s-%s" % (area, d(3), d(4))
    elif kind == 1:
        p = "(%s)%s-%s" % (area, d(3), d(4))
    elif kind == 2:
        p = "%s.%s.%s" % (area, d(3), d(4))
    elif kind == 3:
        p = "+1-%s-%s-%s" % (area, d(3), d(4))
    elif kind == 4:
        p = "001-%s-%s-%s" % (area, d(3), d(4))
    else:
        p = "%s%s%s" % (area, d(3), d(4))
    if rng.random() < 0.25:
        p += "x" + d(rng.choice([3, 4, 5]))
    return p


def write_customers(out_dir):
    rng = random.Random(SEED_CUSTOMERS)
    first_day = dt.date(2020, 1, 1)
    span = (dt.date(2022, 12, 31) - first_day).days
    seen_ids = set()
    path = os.path.join(out_dir, "customers-1000.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        w.writerow(["Index", "Customer Id", "First Name", "Last Name",
                    "Company", "City", "Country", "Phone 1", "Phone 2",
                    "Email", "Subscription Date", "Website"])
        for i in range(1, 1001):
            while True:
                cid = "%016X" % rng.getrandbits(64)
                if cid not in seen_ids:
                    seen_ids.add(cid)
                    break
            cid = "".join(ch.lower() if rng.random() < 0.5 else ch
                          for ch in cid)
            first = rng.choice(FIRST)
            last = rng.choice(LAST)
            company = company_name(rng)
            city = rng.choice(CITIES)
            country = rng.choice(COUNTRIES)
            style = rng.randrange(4)
            if style == 0:
                local = "%s.%s" % (slug(first), slug(last))
            elif style == 1:
                local = "%s%s" % (slug(first)[0], slug(last))
            elif style == 2:
                local = "%s%d" % (slug(first), rng.randrange(10, 99))
            else:
                local = "%s_%s" % (slug(last), slug(first)[0])
            email = "%s@%s" % (local, rng.choice(EMAIL_DOMAINS))
            date = first_day + dt.timedelta(days=rng.randrange(span + 1))
            site_words = slug(company.split(",")[0].split(" ")[0])
            if rng.random() < 0.4:
                site_words += slug(rng.choice(LAST))
            scheme = rng.choice(["http", "https"])
            www = "www." if rng.random() < 0.6 else ""
            website = "%s://%s%s.%s/" % (scheme, www, site_words,
                                         rng.choice(TLDS))
            w.writerow([i, cid, first, last, company, city, country,
                        phone(rng), phone(rng), email, date.isoformat(),
                        website])


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out_dir, exist_ok=True)
    write_energy(out_dir)
    write_customers(out_dir)


if __name__ == "__main__":
    main()
